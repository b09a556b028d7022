import { open, type FileHandle } from "node:fs/promises";
import { UsageError } from "../errors.js";

/**
 * Creates (or truncates) an output file (`mode` before the umask). A missing directory or a read-only
 * location is the user's to fix, so it is a UsageError naming the file.
 */
export async function openOutput(path: string, what: string, mode = 0o666): Promise<FileHandle> {
  try {
    return await open(path, "w", mode);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "its directory does not exist" : (error as Error).message;
    throw new UsageError(`Cannot write the ${what} ${path}: ${reason}.`, { hint: "Choose a path in a writable directory.", cause: error });
  }
}

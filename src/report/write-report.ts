import { AtomicFile } from "../results/atomic-file.js";
import { TempFiles } from "../results/temp-files.js";

/**
 * Writes `html` to `path` so that it appears whole or not at all, like every file
 * bulkcheck writes.
 * @throws DestinationExistsError when `path` exists and `force` is false.
 */
export async function writeReportFile(path: string, html: string, force: boolean): Promise<void> {
  const file = await AtomicFile.create(path, { force, temps: new TempFiles() });
  try {
    await new Promise<void>((resolve, reject) => file.stream.once("error", reject).end(html, resolve));
    await file.commit();
  } catch (error) {
    await file.discard();
    throw error;
  }
}

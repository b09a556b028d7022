import { createReadStream } from "node:fs";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { pipeline } from "node:stream/promises";
import type { Writable } from "node:stream";
import { AtomicFile } from "../results/atomic-file.js";
import { TempFiles } from "../results/temp-files.js";
import type { Context } from "./context.js";
import { absolutePath } from "./paths.js";
import { removeStaleTemps } from "./temp-dir.js";

/** Where output goes: `-` or nothing is stdout, anything else a file written atomically. */
export function isStdout(output: string | undefined): boolean {
  return output === undefined || output === "-";
}

/**
 * Produces output into a file at `target` and, when the output is stdout, copies
 * the finished file there: a transfer that breaks and restarts then never leaves
 * half a result in a pipe. `produce` gets the path to write (atomically) to.
 */
export async function withStagedOutput<T>(ctx: Context, output: string | undefined, produce: (path: string) => Promise<T>): Promise<T> {
  if (!isStdout(output)) return produce(absolutePath(ctx, output!));
  await removeStaleTemps();
  const staged = join(tmpdir(), `bulkcheck-${process.pid}-${randomBytes(4).toString("hex")}.out`);
  try {
    const value = await produce(staged);
    await pipeline(createReadStream(staged), ctx.io.stdout, { end: false }).catch(ignoreClosedReader);
    return value;
  } finally {
    await rm(staged, { force: true });
  }
}

/** Writes a file that appears complete or not at all (temp file, fsync, rename). */
export async function writeAtomically<T>(path: string, force: boolean, write: (out: Writable) => Promise<T>): Promise<T> {
  const file = await AtomicFile.create(path, { force, temps: new TempFiles() });
  try {
    const value = await write(file.stream);
    file.stream.end();
    await once(file.stream, "finish");
    await file.commit();
    return value;
  } catch (error) {
    await file.discard();
    throw error;
  }
}

/** The reader of stdout went away (`| head`): it has what it wanted, so that is not an error. */
function ignoreClosedReader(error: unknown): void {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== "EPIPE") throw error;
}

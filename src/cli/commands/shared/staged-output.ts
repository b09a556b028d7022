import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { removeStaleTemps } from "../../temp-dir.js";
import { isStdout } from "./destination.js";

/**
 * Produces output into a file at the path given and, when the output is stdout,
 * copies the finished file there: a transfer that breaks and restarts then never
 * leaves half a result in a pipe. `produce` gets the path to write (atomically) to.
 */
export async function withStagedOutput<T>(ctx: Context, output: string | undefined, produce: (path: string) => Promise<T>): Promise<T> {
  if (!isStdout(output)) return produce(absolutePath(ctx, output));
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

/** The reader of stdout went away (`| head`): it has what it wanted, so that is not an error. */
function ignoreClosedReader(error: unknown): void {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== "EPIPE") throw error;
}

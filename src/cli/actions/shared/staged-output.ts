import { createReadStream } from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Context } from "../../context.js";
import { dataOut } from "../../io.js";
import { absolutePath } from "../../paths.js";
import { withTempDir } from "../../../temp-dir.js";
import { isStdout } from "./destination.js";

/** Results staged for stdout are the user's data: readable by the user alone. */
const STAGED_FILE_MODE = 0o600;

/**
 * Produces output into a file at the path given and, when the output is stdout,
 * copies the finished file there: a transfer that breaks and restarts then never
 * leaves half a result in a pipe. `produce` gets the path to write (atomically)
 * to, and the mode to give it: for stdout, a file in a private (0700) directory
 * of the OS temp directory, itself 0600. On a terminal the copy shows escape codes
 * as text (see dataOut), unless the output was made for a terminal already
 * (`forTerminal`: a boxed table, whose cells are sanitised and whose header has
 * bulkcheck's own colours).
 */
export async function withStagedOutput<T>(
  ctx: Context,
  output: string | undefined,
  produce: (path: string, mode: number | undefined) => Promise<T>,
  forTerminal = false,
): Promise<T> {
  if (!isStdout(output)) return produce(absolutePath(ctx, output), undefined);
  return withTempDir(async (dir) => {
    const staged = join(dir, "output");
    const value = await produce(staged, STAGED_FILE_MODE);
    const out = forTerminal ? ctx.io.stdout : dataOut(ctx.io);
    await pipeline(createReadStream(staged), out, { end: false }).catch(ignoreClosedReader);
    return value;
  });
}

/** The reader of stdout went away (`| head`): it has what it wanted, so that is not an error. */
function ignoreClosedReader(error: unknown): void {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== "EPIPE") throw error;
}

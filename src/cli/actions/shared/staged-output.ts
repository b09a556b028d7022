import { createReadStream } from "node:fs";
import { join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Printer } from "../../printer.js";
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
 * as text (see dataOut), unless the output was made for people already (`made` is
 * "table": boxed, or TSV off a terminal, its cells neutralised either way, the boxed
 * header in bulkcheck's own colours). JSON lines ("json-lines") go through --query one by one.
 */
export async function withStagedOutput<T>(
  ctx: Context,
  output: string | undefined,
  produce: (path: string, mode: number | undefined) => Promise<T>,
  made: "table" | "json-lines" | "data" = "data",
): Promise<T> {
  if (!isStdout(output)) return produce(absolutePath(ctx, output), undefined);
  return withTempDir(async (dir) => {
    const staged = join(dir, "output");
    const value = await produce(staged, STAGED_FILE_MODE);
    const out = made === "table" ? ctx.io.stdout : dataOut(ctx.io);
    const filtered = made === "json-lines" && ctx.printer.filtersJson;
    const steps = filtered ? [createReadStream(staged), selectedLines(ctx.printer), out] : [createReadStream(staged), out];
    await pipeline(steps, { end: false }).catch(ignoreClosedReader);
    return value;
  });
}

/** Each JSON line as --query selects from it (see Printer.jsonText); a line that selects nothing is left out. */
function selectedLines(printer: Printer): Transform {
  const decoder = new TextDecoder();
  let rest = "";
  const select = (line: string) => {
    if (line === "") return "";
    const text = printer.jsonText(JSON.parse(line));
    return text === undefined ? "" : text + "\n";
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
      rest = lines.pop()!;
      done(null, lines.map(select).join(""));
    },
    flush(done) {
      done(null, select(rest + decoder.decode()));
    },
  });
}

/** The reader of stdout went away (`| head`): it has what it wanted, so that is not an error. */
function ignoreClosedReader(error: unknown): void {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== "EPIPE") throw error;
}

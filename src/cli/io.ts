import { Writable, type Readable } from "node:stream";
import { terminalText } from "../ansi.js";
import type { Env } from "../config/paths.js";

/** A writable that may be a terminal (process.stdout, or a test buffer pretending to be one). */
export type TerminalStream = Writable & {
  isTTY?: boolean;
  columns?: number;
  hasColors?: (env?: NodeJS.ProcessEnv) => boolean;
};

export type InputStream = Readable & {
  isTTY?: boolean;
  setRawMode?: (mode: boolean) => unknown;
};

/** The process's standard streams, injected so every command can run in-process under a test. */
export interface IO {
  stdin: InputStream;
  stdout: TerminalStream;
  stderr: TerminalStream;
}

export type { Env } from "../config/paths.js";

/** The process's streams, each created by Node when first used: stdin alone costs ~3 ms of every start. */
export function processIO(): IO {
  return {
    get stdin() {
      return process.stdin;
    },
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
  };
}

/**
 * Colour only on a terminal whose `hasColors()` agrees: Node's check honours
 * NO_COLOR, FORCE_COLOR=0 and TERM=dumb, and `--no-color` switches it off too.
 */
export function colourEnabled(stream: TerminalStream, env: Env, noColourFlag: boolean): boolean {
  if (noColourFlag || (env.NO_COLOR !== undefined && env.NO_COLOR !== "")) return false;
  if (!stream.isTTY) return false;
  return stream.hasColors?.(env) ?? false;
}

/**
 * Where data for stdout is written (results, a join, a report, `--rejects -`): stdout
 * itself, or, when stdout is a terminal and so read by a person, a stream that writes
 * the UTF-8 text it is given to stdout as terminalText, so a cell's escape codes show
 * as text and do nothing. Ending it leaves stdout open.
 */
export function dataOut(io: IO): Writable {
  const { stdout } = io;
  if (!stdout.isTTY) return stdout;
  const decoder = new TextDecoder();
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      stdout.write(terminalText(decoder.decode(chunk, { stream: true })), done);
    },
    final(done) {
      const rest = decoder.decode();
      if (rest === "") done();
      else stdout.write(terminalText(rest), done);
    },
  });
}

import { styled, type Style } from "../ansi.js";
import type { Failure } from "./failure.js";
import type { IO } from "./io.js";

export interface PrinterOptions {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** Colour on stderr (humans); stdout data is never coloured. */
  colour: boolean;
}

/** A line redrawn in place at the foot of the terminal (a spinner). */
export interface LiveLine {
  clear(): void;
  render(): void;
}

/**
 * Where every line a command prints goes: data to stdout, everything for humans
 * to stderr. `--quiet` silences notes but never warnings or errors. While a live
 * line (a spinner) is drawn, each line printed clears it first and draws it again
 * below, so no spinner frame is left in front of a line.
 */
export class Printer {
  #live: LiveLine | undefined;

  constructor(
    readonly io: IO,
    readonly options: PrinterOptions,
  ) {}

  /** Keeps `line` below whatever is printed until the returned function releases it. */
  holdLiveLine(line: LiveLine): () => void {
    this.#live = line;
    return () => {
      if (this.#live === line) this.#live = undefined;
    };
  }

  /** One line of data on stdout (task ids, TSV rows). */
  data(line: string): void {
    this.#write(this.io.stdout, line + "\n");
  }

  /** One JSON document on one line of stdout. */
  json(value: unknown): void {
    this.#write(this.io.stdout, JSON.stringify(value) + "\n");
  }

  /** A note for humans on stderr; silenced by --quiet. */
  note(text: string): void {
    if (!this.options.quiet) this.#write(this.io.stderr, text + "\n");
  }

  warn(text: string): void {
    this.#write(this.io.stderr, `${this.style("yellow", "warning:")} ${text}\n`);
  }

  error(text: string, hint?: string): void {
    this.#write(this.io.stderr, `${this.style("red", "error:")} ${text}\n${hint ? `${hint}\n` : ""}`);
  }

  /**
   * Why the run failed, on stderr: "error: …" and the hint for people, or with
   * --json one object a script can parse, `{"error": {code, exit_code, message, hint}}`.
   */
  failure(failure: Failure): void {
    if (failure.silent) return;
    if (!this.options.json) return this.error(failure.message, failure.hint);
    const { code, exitCode, message, hint } = failure;
    this.#write(this.io.stderr, JSON.stringify({ error: { code, exit_code: exitCode, message, hint: hint ?? null } }) + "\n");
  }

  /** Diagnostics for --verbose. Callers must pass text that is already free of secrets. */
  debug(text: string): void {
    if (this.options.verbose) this.#write(this.io.stderr, this.style("dim", text) + "\n");
  }

  #write(stream: NodeJS.WritableStream, text: string): void {
    this.#live?.clear();
    stream.write(text);
    this.#live?.render();
  }

  style(style: Style, text: string): string {
    return this.options.colour ? styled(style, text) : text;
  }
}

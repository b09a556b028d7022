import { styled, terminalJson, terminalText, type Style } from "../ansi.js";
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
 * below, so no spinner frame is left in front of a line. Text for humans may quote a
 * file or the service (a column name, a carrier, a service message), so it passes
 * terminalText here, before bulkcheck's own colours are added; data lines are written
 * as they are (tables neutralise their own cells).
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
    this.#write(this.io.stdout, terminalJson(value) + "\n");
  }

  /** A note for humans on stderr; silenced by --quiet, unless the user asked for it by name (`asked`: --changes-summary). */
  note(text: string, asked = false): void {
    if (asked || !this.options.quiet) this.#write(this.io.stderr, terminalText(text) + "\n");
  }

  warn(text: string): void {
    this.#write(this.io.stderr, `${this.style("yellow", "warning:")} ${terminalText(text)}\n`);
  }

  error(text: string, hint?: string): void {
    this.#write(this.io.stderr, `${this.style("red", "error:")} ${terminalText(text)}\n${hint ? `${terminalText(hint)}\n` : ""}`);
  }

  /**
   * Why the run failed, on stderr: "error: …" and the hint for people, or with
   * --json one object a script can parse, `{"error": {code, exit_code, message, hint}}`.
   */
  failure(failure: Failure): void {
    if (failure.silent) return;
    if (!this.options.json) return this.error(failure.message, failure.hint);
    const { code, exitCode, message, hint } = failure;
    // The message and hint are words for people, quoting the service or a file: as a terminal may show them.
    const error = { code, exit_code: exitCode, message: terminalText(message), hint: hint === undefined ? null : terminalText(hint) };
    this.#write(this.io.stderr, terminalJson({ error }) + "\n");
  }

  /** Diagnostics for --verbose. Callers must pass text that is already free of secrets. */
  debug(text: string): void {
    if (this.options.verbose) this.#write(this.io.stderr, this.style("dim", terminalText(text)) + "\n");
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

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

/**
 * Where every line a command prints goes: data to stdout, everything for humans
 * to stderr. `--quiet` silences notes but never warnings or errors. Text for humans
 * may quote a file or the service (a column name, a carrier, a service message), so
 * it passes terminalText here, before bulkcheck's own colours are added; data lines
 * are written as they are (tables neutralise their own cells).
 */
export class Printer {
  constructor(
    readonly io: IO,
    readonly options: PrinterOptions,
  ) {}

  /** One line of data on stdout (task ids, TSV rows). */
  data(line: string): void {
    this.io.stdout.write(line + "\n");
  }

  /** One JSON document on one line of stdout. */
  json(value: unknown): void {
    this.io.stdout.write(terminalJson(value) + "\n");
  }

  /** A note for humans on stderr; silenced by --quiet. */
  note(text: string): void {
    if (!this.options.quiet) this.io.stderr.write(terminalText(text) + "\n");
  }

  warn(text: string): void {
    this.io.stderr.write(`${this.style("yellow", "warning:")} ${terminalText(text)}\n`);
  }

  error(text: string, hint?: string): void {
    this.io.stderr.write(`${this.style("red", "error:")} ${terminalText(text)}\n`);
    if (hint) this.io.stderr.write(`${terminalText(hint)}\n`);
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
    this.io.stderr.write(terminalJson({ error }) + "\n");
  }

  /** Diagnostics for --verbose. Callers must pass text that is already free of secrets. */
  debug(text: string): void {
    if (this.options.verbose) this.io.stderr.write(this.style("dim", terminalText(text)) + "\n");
  }

  style(style: Style, text: string): string {
    return this.options.colour ? styled(style, text) : text;
  }
}

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

/**
 * Where every line a command prints goes: data to stdout, everything for humans
 * to stderr. `--quiet` silences notes but never warnings or errors.
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
    this.io.stdout.write(JSON.stringify(value) + "\n");
  }

  /** A note for humans on stderr; silenced by --quiet. */
  note(text: string): void {
    if (!this.options.quiet) this.io.stderr.write(text + "\n");
  }

  warn(text: string): void {
    this.io.stderr.write(`${this.style("yellow", "warning:")} ${text}\n`);
  }

  error(text: string, hint?: string): void {
    this.io.stderr.write(`${this.style("red", "error:")} ${text}\n`);
    if (hint) this.io.stderr.write(`${hint}\n`);
  }

  /**
   * Why the run failed, on stderr: "error: …" and the hint for people, or with
   * --json one object a script can parse, `{"error": {code, exit_code, message, hint}}`.
   */
  failure(failure: Failure): void {
    if (failure.silent) return;
    if (!this.options.json) return this.error(failure.message, failure.hint);
    const { code, exitCode, message, hint } = failure;
    this.io.stderr.write(JSON.stringify({ error: { code, exit_code: exitCode, message, hint: hint ?? null } }) + "\n");
  }

  /** Diagnostics for --verbose. Callers must pass text that is already free of secrets. */
  debug(text: string): void {
    if (this.options.verbose) this.io.stderr.write(this.style("dim", text) + "\n");
  }

  style(style: Style, text: string): string {
    return this.options.colour ? styled(style, text) : text;
  }
}

import type { IO } from "./io.js";

export interface PrinterOptions {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** Colour on stderr (humans); stdout data is never coloured. */
  colour: boolean;
}

const ANSI = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;
export type Style = keyof typeof ANSI;

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

  /** Diagnostics for --verbose. Callers must pass text that is already free of secrets. */
  debug(text: string): void {
    if (this.options.verbose) this.io.stderr.write(this.style("dim", text) + "\n");
  }

  style(style: Style, text: string): string {
    if (!this.options.colour) return text;
    const [open, close] = ANSI[style];
    return `\u001b[${open}m${text}\u001b[${close}m`;
  }
}

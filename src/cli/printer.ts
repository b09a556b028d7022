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

/** What --query makes of each JSON value a command prints (see json-query.ts). */
export interface JsonFilter {
  readonly expression: string;
  /** The part of `value` the expression selects; throws a UsageError when it cannot be evaluated on it. */
  select(value: unknown): unknown;
}

/** A line redrawn in place at the foot of the terminal (a spinner). */
export interface LiveLine {
  /** Draws it, and keeps redrawing it on its own clock. */
  start(): void;
  /** Stops redrawing it and erases it (nothing when it is not drawn). */
  stop(): void;
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
  /** A question waits for its answer on the terminal: no live line is drawn meanwhile. */
  #asking = false;
  #filter: JsonFilter | undefined;
  #filterFailure: Error | undefined;

  constructor(
    readonly io: IO,
    readonly options: PrinterOptions,
  ) {}

  /**
   * Draws `line` (once answered, when a question waits) and keeps it below whatever is
   * printed until the returned function stops and releases it.
   */
  showLiveLine(line: LiveLine): () => void {
    this.#live = line;
    if (!this.#asking) line.start();
    return () => {
      if (this.#live === line) this.#live = undefined;
      line.stop();
    };
  }

  /**
   * Runs `ask`, a question waiting for an answer on the terminal, with no live line drawn:
   * a spinner's next frame would erase the question (its line goes back to the first
   * column and is cleared), leaving progress over a question nobody sees. The line is
   * drawn again below the answer.
   */
  async asking<T>(ask: () => Promise<T>): Promise<T> {
    this.#asking = true;
    this.#live?.stop();
    try {
      return await ask();
    } finally {
      this.#asking = false;
      this.#live?.start();
    }
  }

  /** One line of data on stdout (task ids, TSV rows). */
  data(line: string): void {
    this.#write(this.io.stdout, line + "\n");
  }

  /** From now on, every JSON value goes through `filter` (--query) before it is printed. */
  filterJson(filter: JsonFilter): void {
    this.#filter = filter;
  }

  /** One JSON document on one line of stdout; with --query, what it selects (see `jsonText`). */
  json(value: unknown): void {
    const text = this.jsonText(value);
    if (text !== undefined) this.#write(this.io.stdout, text + "\n");
  }

  /** Whether JSON goes through --query: JSON lines written as a stream then go through `jsonText` one by one. */
  get filtersJson(): boolean {
    return this.#filter !== undefined;
  }

  /**
   * A JSON value as its line of stdout shows it; with --query, what the expression selects
   * of it: nothing (undefined) when that is null, such as a field the object lacks; a
   * string as it is (as gh's --jq prints strings); anything else as JSON. An expression
   * that fails on a value gives nothing for it and is reported once the command has done
   * its work (see `filterFailure`): a run must not stop halfway because of how its output
   * is shown.
   */
  jsonText(value: unknown): string | undefined {
    if (!this.#filter) return terminalJson(value);
    const selected = this.#select(value);
    if (selected === null || selected === undefined) return undefined;
    return typeof selected === "string" ? this.#dataText(selected) : terminalJson(selected);
  }

  /** The first failure of --query on a value printed, if any (main reports it as the command's). */
  filterFailure(): Error | undefined {
    return this.#filterFailure;
  }

  #select(value: unknown): unknown {
    try {
      return this.#filter!.select(value);
    } catch (error) {
      this.#filterFailure ??= error as Error;
      return undefined;
    }
  }

  /** A string selected from data: inert on a terminal, as it came anywhere else. */
  #dataText(text: string): string {
    return this.io.stdout.isTTY ? terminalText(text) : text;
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
    const live = this.#asking ? undefined : this.#live;
    live?.clear();
    stream.write(text);
    live?.render();
  }

  style(style: Style, text: string): string {
    return this.options.colour ? styled(style, text) : text;
  }
}

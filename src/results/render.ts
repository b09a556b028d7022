import { isBooleanColumn } from "../spec/products.js";
import type { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { delimitedLine, type OutputDelimiter } from "../csv/write.js";
import { cellText, renderTable } from "./format-table.js";
import type { TablePart } from "./read-results.js";

export const OUTPUT_FORMATS = ["csv", "tsv", "jsonl", "json", "table", "xlsx"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
/** The formats that are text; xlsx is a zip, written by renderXlsx. */
export type TextFormat = Exclude<OutputFormat, "xlsx">;

export interface RenderOptions {
  format: TextFormat;
  /** Data rows shown by `table` (default 20). */
  tableRows?: number;
  /** Colour for `table` (default off). */
  colour?: boolean;
  /** The terminal width `table` fits into (default 80). */
  tableWidth?: number | undefined;
  /**
   * Whether a `table` is read on a terminal (default true): boxed there; anywhere else (a
   * pipe, a file) TSV of every row. Either way it is a table for people, each cell on one line
   * with its control characters shown as escapes (see cellText), as `status` prints its table.
   */
  terminal?: boolean | undefined;
}

export const DEFAULT_TABLE_ROWS = 20;

/** A table stream (header row, then data rows) rendered as text chunks. */
export type Renderer = (table: AsyncIterable<readonly string[]>) => AsyncGenerator<string>;

/** The renderer for a format. Pure: feed it rows, collect strings. */
export function rendererFor(options: RenderOptions): Renderer {
  switch (options.format) {
    case "csv":
      return (table) => renderDelimited(table, ",");
    case "tsv":
      return (table) => renderDelimited(table, "\t");
    case "jsonl":
      return renderJsonLines;
    case "json":
      return renderJsonArray;
    case "table":
      if (options.terminal === false) return (table) => renderDelimited(table, "\t", cellText);
      return (table) =>
        renderTable(table, { rows: options.tableRows ?? DEFAULT_TABLE_ROWS, colour: options.colour ?? false, width: options.tableWidth });
  }
}

export interface WriteTextOptions {
  signal?: AbortSignal;
  /** End `out` when done (default true). False for a stream the caller keeps using, like stdout. */
  end?: boolean;
}

/**
 * Writes text (or byte) chunks into `out` with backpressure, and returns the bytes written.
 * On error or abort the returned promise rejects; `out` is destroyed only when `end` is true.
 */
export async function writeText(
  chunks: AsyncIterable<string | Uint8Array>,
  out: Writable,
  options: WriteTextOptions = {},
): Promise<{ bytes: number }> {
  let bytes = 0;
  async function* counted(source: AsyncIterable<string | Uint8Array>): AsyncGenerator<string | Uint8Array> {
    for await (const chunk of source) {
      bytes += Buffer.byteLength(chunk);
      yield chunk;
    }
  }
  await pipeline(chunks, counted, out, { signal: options.signal, end: options.end ?? true });
  return { bytes };
}

export type WriteRowsOptions = RenderOptions & WriteTextOptions;

/** Renders a table stream (header row, then data rows) into `out`; see `writeText`. */
export function writeRows(table: AsyncIterable<readonly string[]>, out: Writable, options: WriteRowsOptions): Promise<{ bytes: number }> {
  return writeText(rendererFor(options)(table), out, options);
}

/**
 * Renders a table (header row first) as CSV or TSV with `\n` line ends. Values are
 * written as sent (`true`/`false` stay text), but never as a formula: every cell of a
 * result is the service's (see neutraliseFormula).
 */
/** Rows as CSV or TSV; `cell` rewrites each cell first (a table's, for people). */
async function* renderDelimited(
  table: AsyncIterable<readonly string[]>,
  delimiter: OutputDelimiter,
  cell?: (text: string) => string,
): AsyncGenerator<string> {
  for await (const batch of batches(table, BATCH_ROWS)) {
    yield batch.map((row) => delimitedLine(cell ? row.map(cell) : row, delimiter, false)).join("");
  }
}

/** Renders table parts as CSV: rows through `delimitedLine`, text already in output form as it is. */
export async function* renderCsvParts(parts: AsyncIterable<TablePart>): AsyncGenerator<string> {
  for await (const part of parts) {
    yield "csv" in part ? part.csv : part.rows.map((row) => delimitedLine(row, ",", false)).join("");
  }
}

/**
 * The JSON value of a field. `activated` is the spec's boolean (named `activity_activated`
 * and the like for a chain's later product), so its `true`/`false` become JSON booleans; any
 * other text there, and every other column (the identifier included: digits with a country
 * code are an id, not a number), stays a string as sent.
 */
export function jsonValue(column: string, value: string): string | boolean {
  if (isBooleanColumn(column) && (value === "true" || value === "false")) return value === "true";
  return value;
}

/** Returns a function rendering a row as one JSON object keyed by the header's names. */
function jsonObjectRenderer(header: readonly string[]): (row: readonly string[]) => string {
  const keys = header.map((name) => `${JSON.stringify(name)}:`);
  return (row) => `{${header.map((name, i) => keys[i] + JSON.stringify(jsonValue(name, row[i] ?? ""))).join(",")}}`;
}

/** Splits a table into its header and a renderer for its rows; an empty table has no rows. */
async function* jsonRows(table: AsyncIterable<readonly string[]>): AsyncGenerator<string[]> {
  let render: ((row: readonly string[]) => string) | undefined;
  for await (const batch of batches(table, BATCH_ROWS)) {
    const lines: string[] = [];
    for (const row of batch) {
      if (render) lines.push(render(row));
      else render = jsonObjectRenderer(row);
    }
    if (lines.length > 0) yield lines;
  }
}

/** JSON Lines: one object per data row, each on its own line. */
async function* renderJsonLines(table: AsyncIterable<readonly string[]>): AsyncGenerator<string> {
  for await (const lines of jsonRows(table)) yield `${lines.join("\n")}\n`;
}

/** One JSON array of row objects, written as it streams: never held in memory whole. */
async function* renderJsonArray(table: AsyncIterable<readonly string[]>): AsyncGenerator<string> {
  let separator = "\n";
  yield "[";
  for await (const lines of jsonRows(table)) {
    yield separator + lines.join(",\n");
    separator = ",\n";
  }
  yield "\n]\n";
}

/**
 * Groups an async sequence into arrays of up to `size` items. Renderers turn a batch
 * into one string, so the output stream sees a few large writes instead of one per row.
 */
async function* batches<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Rows per rendered chunk: about 64 KiB of carrier CSV. */
const BATCH_ROWS = 1024;

import type { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { renderDelimited } from "./format-delimited.js";
import { renderJsonArray, renderJsonLines } from "./format-json.js";
import { renderTable } from "./format-table.js";

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

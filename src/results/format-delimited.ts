import { BATCH_ROWS, batches } from "./batches.js";
import type { TablePart } from "./table-part.js";

export type Delimiter = "," | "\t";

const NEEDS_QUOTES: Readonly<Record<Delimiter, RegExp>> = { ",": /[",\r\n]/, "\t": /["\t\r\n]/ };

/**
 * One line of CSV or TSV, RFC 4180 style: a field is quoted only when it holds the
 * delimiter, a quote or a line break, and inner quotes are doubled. Written here rather
 * than with csv-stringify because per-row stringify calls were a fifth of the time of a
 * million-row download; tests read the output back with csv-parse.
 */
export function delimitedLine(row: readonly string[], delimiter: Delimiter): string {
  const special = NEEDS_QUOTES[delimiter];
  return `${row.map((field) => (special.test(field) ? `"${field.replaceAll('"', '""')}"` : field)).join(delimiter)}\n`;
}

/**
 * Renders a table (header row first) as CSV or TSV with `\n` line ends. Values are
 * written as sent (`true`/`false` stay text).
 */
export async function* renderDelimited(
  table: AsyncIterable<readonly string[]>,
  delimiter: Delimiter,
): AsyncGenerator<string> {
  for await (const batch of batches(table, BATCH_ROWS)) {
    yield batch.map((row) => delimitedLine(row, delimiter)).join("");
  }
}

/** Renders table parts as CSV: rows through `delimitedLine`, fast-path text as it is. */
export async function* renderCsvParts(parts: AsyncIterable<TablePart>): AsyncGenerator<string> {
  for await (const part of parts) {
    yield "csv" in part ? part.csv : part.rows.map((row) => delimitedLine(row, ",")).join("");
  }
}

import { delimitedLine, type OutputDelimiter } from "../csv/write.js";
import { BATCH_ROWS, batches } from "./batches.js";
import type { TablePart } from "./table-part.js";

/**
 * Renders a table (header row first) as CSV or TSV with `\n` line ends. Values are
 * written as sent (`true`/`false` stay text), but never as a formula: every cell of a
 * result is the service's (see neutraliseFormula).
 */
export async function* renderDelimited(table: AsyncIterable<readonly string[]>, delimiter: OutputDelimiter): AsyncGenerator<string> {
  for await (const batch of batches(table, BATCH_ROWS)) {
    yield batch.map((row) => delimitedLine(row, delimiter, false)).join("");
  }
}

/** Renders table parts as CSV: rows through `delimitedLine`, text already in output form as it is. */
export async function* renderCsvParts(parts: AsyncIterable<TablePart>): AsyncGenerator<string> {
  for await (const part of parts) {
    yield "csv" in part ? part.csv : part.rows.map((row) => delimitedLine(row, ",", false)).join("");
  }
}

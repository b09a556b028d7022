import { pipeline } from "node:stream/promises";
import { renderXlsx } from "./format-xlsx.js";
import { defaultHeader, statusTable, type JoinInput, type JoinSource, type JoinSummary } from "./join.js";

/**
 * The join as an Excel workbook: one sheet of the source's rows, in order, each source
 * value a text cell (a workbook's cells as the reader showed them, so digits stay digits
 * and `=1+1` stays text), padded to the source's width, then the added columns; then a
 * Summary sheet. Streamed into `input.out` with its backpressure.
 */
export async function joinWorkbook(source: JoinSource, input: JoinInput, summary: JoinSummary): Promise<void> {
  const { rows, added, width, joined } = source;
  const plainList = rows.format.kind === "txt";
  const sourceHeader = rows.header ? padded(rows.header.fields, width) : defaultHeader(rows);
  async function* table(): AsyncGenerator<readonly string[]> {
    yield [...sourceHeader, ...added];
    for await (const batch of joined()) {
      for (const { record, tail } of batch) yield [...(plainList ? [record.raw] : padded(record.fields, width)), ...tail];
    }
  }
  const workbook = renderXlsx(table(), {
    textColumns: sourceHeader.length,
    summary: () => input.summarySheet?.(summary) ?? [statusTable(summary)],
  });
  await pipeline(workbook, input.out, { end: false, ...(input.signal ? { signal: input.signal } : {}) });
}

function padded(fields: readonly string[], width: number): readonly string[] {
  return fields.length >= width ? fields : [...fields, ...new Array<string>(width - fields.length).fill("")];
}

import type { Readable } from "node:stream";
import { CsvSyntaxError } from "../csv/errors.js";
import { RecordReader, type SourceRecord } from "../csv/record-reader.js";
import type { ServiceType } from "../spec/products.js";
import { ResultFileError } from "./errors.js";
import { copyPlainLines, plainLines } from "./plain-lines.js";
import type { ResultRowRules } from "./result-rules.js";
import type { SourceSummary } from "./result-table.js";
import { SourceRows, adoptFirstRecord, isIdentity, type OutputHeader } from "./source-rows.js";
import { textPieces } from "./source-text.js";
import type { TablePart } from "./table-part.js";
import type { RowTally } from "./tally.js";

/** One source being read, and what its rows are counted into. */
export interface SourceReading {
  label: string;
  summary: SourceSummary;
  header: OutputHeader;
  serviceType: ServiceType;
  tally?: RowTally;
  /** What each of its rows must keep to. */
  rules: ResultRowRules;
  /** Copy plain lines through as CSV text where the source allows (only for CSV output). */
  passthrough: boolean;
}

/**
 * One source's table parts: the output header first if this source fixes it, then its
 * data rows. Records are read by the CSV module's RecordReader (empty lines skipped) and
 * rearranged into output order. With `passthrough`, a piece of plain lines (no quotes)
 * of a source whose columns already are the output's is copied through as text
 * instead (copyPlainLines); both give the same CSV.
 * @throws ResultFileError for an unusable file, or the stream's own error.
 */
export async function* sourceParts(bytes: Readable, reading: SourceReading): AsyncGenerator<TablePart> {
  const reader = new RecordReader(",");
  let rows: SourceRows | undefined;
  /** The records as output rows; the first record fixes the shape (and maybe the output header). */
  function* arranged(records: readonly SourceRecord[]): Generator<TablePart> {
    const out: string[][] = [];
    for (const { fields, raw } of records) {
      if (raw === "") continue;
      if (rows) {
        out.push(rows.accept(fields));
        continue;
      }
      const { shape, fixedHeader } = adoptFirstRecord(fields, reading.summary, reading.header, reading.serviceType);
      if (fixedHeader) yield { rows: [fixedHeader] };
      rows = new SourceRows(reading.label, shape, reading.summary, reading.rules, reading.tally);
      if (!shape.hasHeader) out.push(rows.accept(fields));
    }
    if (out.length > 0) yield { rows: out };
  }
  for await (const text of textPieces(bytes)) {
    const plain = rows && reading.passthrough && isIdentity(rows.shape) && reader.atRecordStart ? plainLines(text) : undefined;
    if (rows && plain !== undefined) {
      const { csv, lines } = copyPlainLines(plain, rows);
      reader.skipLines(lines);
      reading.summary.copied = true;
      yield { csv };
    } else {
      yield* arranged(readRecords(() => reader.push(text), reading.label));
    }
  }
  yield* arranged(readRecords(() => reader.end(), reading.label));
  reading.rules.finish();
}

function readRecords(read: () => SourceRecord[], label: string): SourceRecord[] {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    throw new ResultFileError("CSV_INVALID", `The result of ${label} is not valid CSV: ${error.message}`, { cause: error });
  }
}

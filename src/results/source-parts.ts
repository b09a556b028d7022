import { Readable } from "node:stream";
import type { ServiceType } from "../spec/products.js";
import { prefixed, readHead } from "./chunks.js";
import { CsvPassthrough } from "./csv-passthrough.js";
import { csvRecordBatches, parseCsvText, type LineEnd } from "./csv-records.js";
import type { SourceSummary } from "./result-table.js";
import { SourceRows, adoptFirstRecord, isIdentity, type OutputHeader } from "./source-rows.js";
import type { CsvPart, RowsPart, TablePart } from "./table-part.js";
import type { RowTally } from "./tally.js";

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** csv-parse also honours this BOM, and then reads the file as UTF-16: left to it. */
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
const LF = 0x0a;
/** The first line is looked for in this many bytes; a file without a line end there is left to the general path. */
const HEAD_LIMIT = 64 * 1024;

/** How the fast path reads a CSV: its record delimiter, first record, and where its data starts. */
export interface PassthroughPlan {
  lineEnd: LineEnd;
  first: string[];
  /** Bytes of BOM before the first line. */
  bomBytes: number;
  /** Bytes up to and including the first line's line feed. */
  firstLineBytes: number;
}

/**
 * Whether the fast path can read a CSV that starts with `head`, decided so csv-parse
 * would agree: no UTF-16 BOM, and a first line that is not empty, has no carriage
 * return but a final CRLF's, and is one whole record. The first line end found then
 * is the file's record delimiter, as csv-parse discovers it.
 */
export function planPassthrough(head: Buffer): PassthroughPlan | undefined {
  if (head.subarray(0, UTF16LE_BOM.length).equals(UTF16LE_BOM)) return undefined;
  const bomBytes = head.subarray(0, UTF8_BOM.length).equals(UTF8_BOM) ? UTF8_BOM.length : 0;
  const lf = head.indexOf(LF, bomBytes);
  if (lf < 0) return undefined;
  const lineEnd: LineEnd = lf > bomBytes && head[lf - 1] === 0x0d ? "\r\n" : "\n";
  const line = head.toString("utf8", bomBytes, lf - (lineEnd.length - 1));
  if (line === "" || line.includes("\r")) return undefined;
  let records: string[][];
  try {
    records = parseCsvText(line, lineEnd, "");
  } catch {
    return undefined; // a quoted field running onto the next line: the general path reports or reads it
  }
  const [first] = records;
  return first ? { lineEnd, first, bomBytes, firstLineBytes: lf + 1 } : undefined;
}

/** One source being read, and what its rows are counted into. */
export interface SourceReading {
  label: string;
  summary: SourceSummary;
  header: OutputHeader;
  serviceType: ServiceType;
  tally?: RowTally;
  /** Copy rows through as CSV text where the source allows (only for CSV output). */
  passthrough: boolean;
}

/** The general path: every record parsed by csv-parse and rearranged into output order. */
async function* parsedParts(bytes: Readable, reading: SourceReading): AsyncGenerator<RowsPart> {
  let rows: SourceRows | undefined;
  for await (const records of csvRecordBatches(bytes, reading.label)) {
    const out: string[][] = [];
    for (const record of records) {
      if (rows) {
        out.push(rows.accept(record));
        continue;
      }
      const { shape, fixedHeader } = adoptFirstRecord(record, reading.summary, reading.header, reading.serviceType);
      if (fixedHeader) yield { rows: [fixedHeader] };
      rows = new SourceRows(reading.label, shape, reading.summary, reading.tally);
      if (!shape.hasHeader) out.push(rows.accept(record));
    }
    if (out.length > 0) yield { rows: out };
  }
  rows?.finish();
}

/**
 * The fast path: the bytes after the BOM (and the header line, if any), cut at line
 * feeds and decoded a run of whole lines at a time. Only the line that straddles two
 * chunks is joined; the rest of a chunk is decoded where it lies. A line feed byte ends
 * any UTF-8 sequence, so invalid bytes become U+FFFD exactly as csv-parse makes them.
 */
async function* passedThroughParts(head: Buffer, rest: AsyncIterator<unknown>, plan: PassthroughPlan, rows: SourceRows): AsyncGenerator<CsvPart> {
  const scanner = new CsvPassthrough(plan.lineEnd, rows);
  // Bytes after the last line feed so far, kept as pieces so a very long line is joined once.
  let pending: Buffer[] = [];
  for await (const chunk of prefixed(head.subarray(rows.shape.hasHeader ? plan.firstLineBytes : plan.bomBytes), rest)) {
    let from = 0;
    if (pending.length > 0) {
      const firstLf = chunk.indexOf(LF);
      if (firstLf < 0) {
        pending.push(chunk);
        continue;
      }
      from = firstLf + 1;
      yield { csv: scanner.lines(Buffer.concat([...pending, chunk.subarray(0, from)]).toString("utf8")) };
      pending = [];
    }
    const lastLf = chunk.lastIndexOf(LF);
    if (lastLf >= from) yield { csv: scanner.lines(chunk.toString("utf8", from, lastLf + 1)) };
    if (Math.max(from, lastLf + 1) < chunk.length) pending.push(chunk.subarray(Math.max(from, lastLf + 1)));
  }
  yield { csv: scanner.end(Buffer.concat(pending).toString("utf8")) };
}

/**
 * One source's table parts: the output header first if this source fixes it, then its
 * data rows. With `passthrough`, a source whose fields already are the output's
 * columns in order is copied through as text; any other goes through csv-parse.
 * Both give byte-identical CSV output.
 * @throws ResultFileError for an unusable file, or the stream's own error.
 */
export async function* sourceParts(stream: Readable, reading: SourceReading): AsyncGenerator<TablePart> {
  if (!reading.passthrough) {
    yield* parsedParts(stream, reading);
    return;
  }
  const chunks = stream[Symbol.asyncIterator]();
  const head = await readHead(chunks, (chunk, total) => chunk.includes(LF) || total >= HEAD_LIMIT);
  const plan = planPassthrough(head);
  if (plan) {
    const { shape, fixedHeader } = adoptFirstRecord(plan.first, reading.summary, reading.header, reading.serviceType);
    if (fixedHeader) yield { rows: [fixedHeader] };
    if (isIdentity(shape)) {
      reading.summary.copied = true;
      yield* passedThroughParts(head, chunks, plan, new SourceRows(reading.label, shape, reading.summary, reading.tally));
      return;
    }
  }
  // Adopting the same first record again in the general path changes nothing.
  yield* parsedParts(Readable.from(prefixed(head, chunks), { objectMode: false }), reading);
}

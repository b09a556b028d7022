import { decodeText, undecodableError, UndecodableText, type TextEncoding } from "./decode.js";
import { detectHeader, sniffDelimiter, sniffLineEnding } from "./dialect.js";
import { openSource, type ListSource } from "./input-source.js";
import { countLineBreaks, RecordReader, type CellBatch, type SourceRecord } from "./record-reader.js";

export interface ListFormat {
  /** `csv` when fields are split on a delimiter (with RFC 4180 quoting), `txt` for one value per line. */
  kind: "txt" | "csv";
  delimiter?: string;
  hasHeader: boolean;
  encoding: TextEncoding;
}

/** A dialect decided earlier (stored in PreparationSettings), to read the same file the same way again. */
export interface KnownDialect {
  /** Absent for a plain list. */
  delimiter?: string;
  hasHeader: boolean;
}

export interface RowSource {
  name: string;
  /** Lower-case extension of the path or stream name ("" when none). */
  extension: string;
  /** Size in bytes when the source is a file. */
  size: number | undefined;
  format: ListFormat;
  /** The file's first line end, for writing rows back in its own style. Fields are quoted with `"`. */
  lineEnding: "\r\n" | "\n" | "\r";
  header: SourceRecord | undefined;
  /** The widest record seen in the sample (header included). */
  columnCount: number;
  /** The first data records (up to SAMPLE_ROWS); `batches()` yields them again. */
  sample: readonly SourceRecord[];
  /** Data records (header excluded) in file order, in the batches they were read in. Iterate once. */
  batches(): AsyncGenerator<SourceRecord[], void, undefined>;
  /** The same records one by one. */
  rows(): AsyncGenerator<SourceRecord, void, undefined>;
  /** Only one column (0-based) of the same records, batched: the cheap way to read a large list. */
  cells(column: number): AsyncGenerator<CellBatch, void, undefined>;
  /** Releases the file when the rows are not read to the end. */
  close(): Promise<void>;
}

const SAMPLE_CHARS = 64 * 1024;
const SAMPLE_ROWS = 200;

/**
 * Opens a list and reads its dialect from the first 64 KiB: encoding, delimiter,
 * header. Records then stream with flat memory. Preparation and the join back to
 * the source both read rows through here, so they see the same rows, fields and
 * line numbers; pass `known` (from PreparationSettings) to skip the guessing.
 */
export async function openRows(source: ListSource, known?: KnownDialect): Promise<RowSource> {
  const opened = await openSource(source);
  const decoded = await decodeText(opened.bytes, opened.name);
  const chunks = decoded.chunks;
  let text = "";
  let reader: RecordReader | undefined;
  /** Names the line of undecodable bytes: what was read before them, plus the valid start of their chunk. */
  const rethrow = (error: unknown): never => {
    if (!(error instanceof UndecodableText)) throw error;
    const line = reader ? reader.lineAfter(error.decoded) : 1 + countLineBreaks(text + error.decoded);
    throw undecodableError(opened.name, error, line);
  };
  try {
    let complete = false;
    while (text.length < SAMPLE_CHARS) {
      const next = await chunks.next().catch(rethrow);
      if (next.done) {
        complete = true;
        break;
      }
      text += next.value;
    }
    const delimiter = known ? known.delimiter : sniffDelimiter(text, complete, opened.extension);
    const kind = delimiter === undefined ? "txt" : "csv";
    reader = new RecordReader(delimiter, opened.name);
    const records = reader;
    const first = records.push(text);
    if (complete) first.push(...records.end());
    const hasHeader = known ? known.hasHeader : detectHeader(first, kind);
    const header = hasHeader ? first.shift() : undefined;
    const columnCount = Math.max(1, header?.fields.length ?? 0, ...first.slice(0, SAMPLE_ROWS).map((r) => r.fields.length));

    /** The sample's records first, then the rest of the file read with `read`/`finish`. */
    async function* stream<T>(first: T | undefined, read: (chunk: string) => T, finish: () => T): AsyncGenerator<T, void, undefined> {
      try {
        if (first !== undefined) yield first;
        if (complete) return;
        for (;;) {
          const next = await chunks.next().catch(rethrow);
          if (next.done) break;
          yield read(next.value);
        }
        yield finish();
      } finally {
        await chunks.return();
      }
    }
    const batches = () => stream(first, (chunk) => records.push(chunk), () => records.end());
    const format: ListFormat = delimiter === undefined ? { kind, hasHeader, encoding: decoded.encoding } : { kind, delimiter, hasHeader, encoding: decoded.encoding };
    return {
      name: opened.name,
      extension: opened.extension,
      size: opened.size,
      format,
      lineEnding: sniffLineEnding(text),
      header,
      columnCount,
      sample: first.slice(0, SAMPLE_ROWS),
      batches,
      async *rows() {
        for await (const batch of batches()) yield* batch;
      },
      cells: (column) =>
        stream(
          { lines: first.map((r) => r.line), cells: first.map((r) => r.fields[column] ?? "") },
          (chunk) => records.pushCells(chunk, column),
          () => records.endCells(column),
        ),
      close: async () => {
        await chunks.return();
      },
    };
  } catch (error) {
    await chunks.return();
    throw error;
  }
}

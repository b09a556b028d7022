import { decodeText, undecodableError, UndecodableText } from "./decode.js";
import { detectEncoding } from "./detect-encoding.js";
import { detectHeader, SAMPLE_ROWS, sniffDelimiter, sniffLineEnding } from "./dialect.js";
import { openSource, startsLikeZip, type ListFile } from "./input-source.js";
import { CsvSyntaxError } from "../csv/errors.js";
import { countLineBreaks, lineEndAfter, RecordReader, type SourceRecord, type TextBlock } from "../csv/record-reader.js";
import { InputRejectedError } from "../errors.js";
import { unreadableList } from "./csv-errors.js";
import type { KnownDialect, ListFormat, RowSource } from "./row-source.js";
import { openWorkbookRows } from "./workbook-rows.js";
import { openWorkbook } from "./workbook-sheets.js";

const SAMPLE_CHARS = 64 * 1024;

/**
 * Opens a list file: an Excel workbook (known by its content, see openWorkbook) as the
 * rows of one sheet (openWorkbookRows), anything else as text. Preparation and the join
 * back to the source both read rows through here, so they see the same rows, fields and
 * line numbers; pass `known` (from PreparationSettings) to skip the guessing. Once
 * `signal` aborts, reading stops and rejects with its reason.
 * @throws UsageError for `known.sheet` when the file is no workbook.
 */
export async function openRows(file: string | ListFile, known?: Partial<KnownDialect>, signal?: AbortSignal): Promise<RowSource> {
  const listed = typeof file === "string" ? { path: file, name: file } : file;
  if (await startsLikeZip(listed.path)) {
    const workbook = await openWorkbook(listed.path, listed.name, signal);
    if (workbook) return openWorkbookRows(listed, workbook, known, signal);
  }
  if (known?.sheet !== undefined) {
    throw new InputRejectedError(`${listed.name} is not an Excel workbook, so it has no sheet "${known.sheet}".`, {
      hint: "Pass --sheet only with an .xlsx workbook.",
    });
  }
  return openText(listed, known, signal);
}

/**
 * A text list: finds its encoding (detectEncoding, unless given) and reads its dialect
 * from the first 64 KiB: delimiter, header. Records then stream with flat memory.
 * `signal` is checked before every read (64 KiB), so stopping is prompt however long the list.
 */
async function openText(file: ListFile, known: Partial<KnownDialect> | undefined, signal: AbortSignal | undefined): Promise<RowSource> {
  // A file that cannot be read fails detection; openSource then says why, in the user's words.
  const encoding = known?.encoding ?? (await detectEncoding(file.path).catch(() => "utf8" as const));
  const opened = await openSource(file);
  const decoded = await decodeText(opened.bytes, opened.name, encoding);
  const chunks = decoded.chunks;
  let start = "";
  let reader: RecordReader | undefined;
  /**
   * A list that cannot be read, as the user sees it; undecodable bytes are named by their line:
   * what was read before them, plus the valid start of their chunk.
   */
  const rethrow = (error: unknown): never => {
    if (error instanceof CsvSyntaxError) throw unreadableList(opened.name, error);
    if (!(error instanceof UndecodableText)) throw error;
    const line = reader ? reader.lineAfter(error.decoded) : 1 + countLineBreaks(start + error.decoded);
    throw undecodableError(opened.name, error, line);
  };
  try {
    let complete = false;
    while (start.length < SAMPLE_CHARS) {
      signal?.throwIfAborted();
      const next = await chunks.next().catch(rethrow);
      if (next.done) {
        complete = true;
        break;
      }
      start += next.value;
    }
    const dialect = known?.hasHeader === undefined ? undefined : { delimiter: known.delimiter, hasHeader: known.hasHeader };
    const delimiter = dialect ? dialect.delimiter : sniffDelimiter(start, complete, opened.extension);
    const kind = delimiter === undefined ? "txt" : "csv";
    const probe = new RecordReader(delimiter);
    const first = probe.push(start);
    if (complete) first.push(...probe.end());
    const hasHeader = dialect ? dialect.hasHeader : detectHeader(first, kind);
    const header = hasHeader ? first[0] : undefined;
    const dataStart = hasHeader ? 1 : 0;
    const sample = first.slice(dataStart, dataStart + SAMPLE_ROWS);
    const columnCount = Math.max(1, header?.fields.length ?? 0, ...sample.map((r) => r.fields.length));
    reader = new RecordReader(delimiter);
    const records = reader;

    /** The file from its start, read with `read`/`finish`; `skipHeader` drops the header from the first piece. */
    async function* stream<T>(read: (text: string) => T, finish: () => T, skipHeader: (first: T) => T): AsyncGenerator<T, void, undefined> {
      try {
        yield hasHeader ? skipHeader(read(start)) : read(start);
        if (!complete) {
          for (;;) {
            signal?.throwIfAborted();
            const next = await chunks.next().catch(rethrow);
            if (next.done) break;
            yield read(next.value);
          }
        }
        yield finish();
      } catch (error) {
        rethrow(error);
      } finally {
        await chunks.return();
      }
    }
    const batches = () =>
      stream(
        (text) => records.push(text),
        () => records.end(),
        (batch) => batch.slice(1),
      );
    const format: ListFormat =
      delimiter === undefined
        ? { kind, hasHeader, encoding: decoded.encoding }
        : { kind, delimiter, hasHeader, encoding: decoded.encoding };
    return {
      name: opened.name,
      extension: opened.extension,
      size: opened.size,
      format,
      lineEnding: sniffLineEnding(start),
      header,
      columnCount,
      sample,
      batches,
      pieces: () =>
        stream(
          (text) => records.pushBlock(text),
          () => records.endBlock(),
          (block) => withoutHeader(block, header),
        ),
      close: async () => {
        await chunks.return();
        await opened.close();
      },
    };
  } catch (error) {
    await chunks.return();
    await opened.close();
    return rethrow(error);
  }
}

/** The block minus the header record that starts it. */
function withoutHeader(block: TextBlock, header: SourceRecord | undefined): TextBlock {
  if (header === undefined) return block;
  const text = block.text;
  const end = Math.min(text.length, lineEndAfter(text, header.raw.length));
  return { text: text.slice(end), firstLine: block.firstLine + countLineBreaks(text, 0, end) };
}

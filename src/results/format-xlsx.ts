import { isBooleanColumn } from "../spec/products.js";
import { count } from "../format-count.js";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import yazl from "yazl";
import { ResultFileError } from "./errors.js";
import { BOLD, MAX_CELL_CHARS, MAX_SHEET_ROWS, SHEET_END, rowXml, sheetStart, workbookParts, type CellValue } from "./xlsx-xml.js";

/** A small table of the Summary sheet: a bold heading row, then its rows. */
export interface SummaryTable {
  heading: readonly string[];
  rows: ReadonlyArray<readonly CellValue[]>;
}

export interface XlsxOptions {
  /** The first columns are text whatever their name (a join's source columns, before the result's). Default 0. */
  textColumns?: number;
  /** The Summary sheet's tables, asked for once every row is written (the counts are known then). None: no Summary sheet. */
  summary?: () => readonly SummaryTable[];
  /** Name of the rows' sheet (default "Results"); rows past a sheet's room continue on "Results 2" and so on. */
  sheetName?: string;
  /** Rows a sheet holds, its header included (default Excel's 1,048,576). */
  sheetRows?: number;
}

/** Characters of sheet XML handed on at a time: a few hundred rows. */
const CHUNK_CHARS = 64 * 1024;

/**
 * A table (header row first, as every renderer takes it) as the bytes of an .xlsx
 * workbook: one sheet of rows, every value a string cell (so `=1+1` stays text) or,
 * in a boolean column (isBooleanColumn), a boolean cell; then a "Summary" sheet. Streamed with the
 * output's backpressure: rows are read only as fast as the zip is written, so memory
 * stays flat however long the table. A join can feed its rows here as a download does.
 * The stream fails with ResultFileError `CELL_TOO_LONG` for a value Excel cannot hold,
 * or with the table's own error. Nothing is read before the first chunk is asked for: a
 * failure that came before the reader was there (a ledger export still creating its file)
 * was an 'error' event nobody listened to, and crashed the process.
 */
export async function* renderXlsx(table: AsyncIterable<readonly string[]>, options: XlsxOptions = {}): AsyncGenerator<Buffer> {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as Readable;
  assemble(zip, output, new RowReader(table), options).catch((error: unknown) => output.destroy(error as Error));
  yield* output as AsyncIterable<Buffer>;
}

async function assemble(zip: yazl.ZipFile, output: Readable, rows: RowReader, options: XlsxOptions): Promise<void> {
  const header = (await rows.next()) ?? [];
  const textColumns = options.textColumns ?? 0;
  const format = new RowFormat(header.map((name, column) => column >= textColumns && isBooleanColumn(name)));
  const base = options.sheetName ?? "Results";
  const sheetRows = options.sheetRows ?? MAX_SHEET_ROWS;
  const names: string[] = [];
  // A consumer that stops (an abort, a failed write) releases the rows being read.
  output.once("close", () => {
    rows.close().catch(() => undefined);
  });
  do {
    names.push(names.length === 0 ? base : `${base} ${names.length + 1}`);
    const sheet = Readable.from(sheetXml(header, rows, format, sheetRows), { objectMode: false });
    const stop = () => sheet.destroy();
    output.once("close", stop);
    zip.addReadStream(sheet, `xl/worksheets/sheet${names.length}.xml`);
    await finished(sheet).finally(() => output.off("close", stop));
  } while (await rows.more());
  const summary = options.summary?.() ?? [];
  if (summary.length > 0) {
    names.push("Summary");
    zip.addBuffer(Buffer.from(summaryXml(summary)), `xl/worksheets/sheet${names.length}.xml`);
  }
  for (const [path, xml] of Object.entries(workbookParts(names))) zip.addBuffer(Buffer.from(xml), path);
  zip.end();
}

/** One sheet: the header (bold, frozen), then rows until the table or the sheet's room ends. */
async function* sheetXml(header: readonly string[], rows: RowReader, format: RowFormat, sheetRows: number): AsyncGenerator<string> {
  const widths = header.map((name) => Math.min(40, Math.max(14, name.length + 4)));
  let xml = sheetStart({ widths, freezeHeader: true }) + rowXml(1, header, BOLD);
  for (let number = 2; number <= sheetRows; number++) {
    const row = await rows.next();
    if (row === undefined) break;
    xml += rowXml(number, format.cells(row, number));
    if (xml.length >= CHUNK_CHARS) {
      yield xml;
      xml = "";
    }
  }
  yield xml + SHEET_END;
}

/** A row's values as cells: booleans where the column is boolean and the value is exactly `true`/`false`. */
class RowFormat {
  constructor(private readonly booleanColumns: readonly boolean[]) {}

  cells(row: readonly string[], number: number): CellValue[] {
    return row.map((value, column) => {
      if (value.length > MAX_CELL_CHARS) {
        throw new ResultFileError(
          "CELL_TOO_LONG",
          `Row ${count(number)} has a value of ${count(value.length)} characters in column ${column + 1}; an Excel cell holds at most ${count(MAX_CELL_CHARS)}.`,
          { hint: "Nothing was written. Write CSV instead (--format csv), which has no such limit." },
        );
      }
      if (this.booleanColumns[column] && (value === "true" || value === "false")) return value === "true";
      return value;
    });
  }
}

function summaryXml(tables: readonly SummaryTable[]): string {
  let xml = sheetStart({ widths: [34, 18, 18] });
  let number = 0;
  for (const table of tables) {
    if (number > 0) number++; // a blank row between tables
    xml += rowXml(++number, table.heading, BOLD);
    for (const row of table.rows) xml += rowXml(++number, row);
  }
  return xml + SHEET_END;
}

/** Reads a table row by row, and can tell whether another row follows without losing it. */
class RowReader {
  readonly #iterator: AsyncIterator<readonly string[]>;
  #peeked: IteratorResult<readonly string[]> | undefined;

  constructor(table: AsyncIterable<readonly string[]>) {
    this.#iterator = table[Symbol.asyncIterator]();
  }

  async next(): Promise<readonly string[] | undefined> {
    const result = this.#peeked ?? (await this.#iterator.next());
    this.#peeked = undefined;
    return result.done ? undefined : result.value;
  }

  async more(): Promise<boolean> {
    this.#peeked ??= await this.#iterator.next();
    return !this.#peeked.done;
  }

  /** Ends the table early: its generator's `finally` runs (a download releases its stream). */
  async close(): Promise<void> {
    await this.#iterator.return?.();
  }
}

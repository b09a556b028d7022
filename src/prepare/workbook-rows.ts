import { createReadStream } from "node:fs";
import ExcelJS from "exceljs";
import { delimitedLine } from "../csv/write.js";
import type { CellBatch, SourceRecord } from "../csv/record-reader.js";
import { InputRejectedError, UsageError } from "../errors.js";
import { cellText } from "./cell-text.js";
import { detectHeader, SAMPLE_ROWS } from "./dialect.js";
import type { ListFile } from "./input-source.js";
import type { KnownDialect, RowSource } from "./row-reader.js";
import { SharedStringTable, sharedStringOf } from "./shared-strings.js";
import type { WorkbookSheet } from "./workbook-sheets.js";

/**
 * exceljs's streaming reader: shared strings emitted into our own compact table (cells hold
 * their index, `{ sharedString: n }`), styles kept (a cell's number format tells a date from a
 * number, and shows padded digits). With shared strings emitted, exceljs spools every sheet to
 * a temp file and reads it after the zip's last entry, so the table is whole before the first row.
 */
const READER_OPTIONS = { sharedStrings: "emit", styles: "cache", hyperlinks: "ignore", worksheets: "emit", entries: "ignore" } as const;
/** Rows per batch handed on: the size of a text block's worth of a typical export. */
const BATCH_ROWS = 2048;

/** One row of the sheet: its number, and its cells by 1-based column. */
type SheetRow = Pick<ExcelJS.Row, "number" | "eachCell" | "getCell">;

/**
 * Opens one sheet of a workbook as rows, streaming (exceljs's WorkbookReader): the sheet
 * named or numbered by `known.sheet`, else the first visible one. Each row's cells are read
 * as cellText shows them; rows are numbered as in Excel, a row the sheet skips is a blank
 * record (as an empty CSV line is), and the empty rows above the first filled one are not
 * read. The header is detected as in a CSV. A record's `raw` is its fields as a CSV line.
 */
export async function openWorkbookRows(
  file: ListFile,
  sheets: readonly WorkbookSheet[],
  known?: Partial<KnownDialect>,
): Promise<RowSource> {
  const sheet = chooseSheet(file.name, sheets, known?.sheet);
  for (let attempt = 1; ; attempt++) {
    try {
      return await openSheet(file, sheet, known);
    } catch (error) {
      if (!missedParts.has(error as Error) || attempt === READ_ATTEMPTS) throw error;
    }
  }
}

/**
 * exceljs 4.4's streaming reader sometimes misses the zip's last entry (exceljs issues #683,
 * #3064: its loop over the entries races the end of the zip stream, more often on a busy
 * machine). When that entry is workbook.xml or the shared strings, the sheet cannot be read;
 * nothing has been handed on yet when that shows, so the workbook is read again from the start.
 */
const READ_ATTEMPTS = 3;

/** The refusals of a workbook the reader read without one of its parts (see READ_ATTEMPTS). */
const missedParts = new WeakSet<Error>();

function missedPart(error: InputRejectedError): InputRejectedError {
  missedParts.add(error);
  return error;
}

async function openSheet(file: ListFile, sheet: WorkbookSheet, known?: Partial<KnownDialect>): Promise<RowSource> {
  const input = createReadStream(file.path);
  const strings = new SharedStringTable();
  const rows = sheetRows(new ExcelJS.stream.xlsx.WorkbookReader(input, READER_OPTIONS), strings, sheet, file.name);
  const recordOf = (row: SheetRow) => recordOfRow(row, strings, file.name);
  const close = async () => {
    await rows.return(undefined);
    input.destroy();
  };
  try {
    const first: SourceRecord[] = [];
    let pending: SheetRow | undefined;
    while (first.length <= SAMPLE_ROWS) {
      const next = await rows.next();
      if (next.done) break;
      if (first.length === 0 && isEmpty(next.value)) continue;
      const line = first.length === 0 ? next.value.number : first.at(-1)!.line + 1;
      for (let blank = line; blank < next.value.number && first.length <= SAMPLE_ROWS; blank++) first.push(blankRecord(blank));
      if (first.length > SAMPLE_ROWS) {
        pending = next.value; // after blank rows that filled the sample
        break;
      }
      first.push(recordOf(next.value));
    }
    const hasHeader = known?.hasHeader ?? detectHeader(first, "csv");
    const header = hasHeader ? first[0] : undefined;
    const buffered = first.slice(hasHeader ? 1 : 0);
    const sample = buffered.slice(0, SAMPLE_ROWS);
    const columnCount = Math.max(1, header?.fields.length ?? 0, ...sample.map((r) => r.fields.length));
    let nextLine = (first.at(-1)?.line ?? 0) + 1;

    /** The rows after the buffered ones, with the sheet's skipped rows as blank ones, in batches. */
    async function* later<T>(blank: (line: number) => T, row: (value: SheetRow) => T): AsyncGenerator<T[], void, undefined> {
      let batch: T[] = [];
      const add = (value: SheetRow) => {
        for (; nextLine < value.number; nextLine++) batch.push(blank(nextLine));
        batch.push(row(value));
        nextLine = value.number + 1;
      };
      if (pending) add(pending);
      for (let next = await rows.next(); !next.done; next = await rows.next()) {
        add(next.value);
        if (batch.length >= BATCH_ROWS) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    }
    async function* batches(): AsyncGenerator<SourceRecord[], void, undefined> {
      try {
        if (buffered.length > 0) yield buffered;
        yield* later(blankRecord, recordOf);
      } finally {
        await close();
      }
    }
    return {
      name: file.name,
      extension: "xlsx",
      size: undefined,
      format: { kind: "xlsx", hasHeader, encoding: "utf8", sheet: sheet.name },
      lineEnding: "\n",
      header,
      columnCount,
      sample,
      batches,
      async *pieces(column) {
        try {
          if (buffered.length > 0) yield { lines: buffered.map((r) => r.line), cells: buffered.map((r) => r.fields[column] ?? "") };
          const cell = (value: SheetRow) => ({ line: value.number, cell: textOf(value.getCell(column + 1), strings, file.name) });
          for await (const batch of later((line) => ({ line, cell: "" }), cell)) {
            yield { lines: batch.map((c) => c.line), cells: batch.map((c) => c.cell) } satisfies CellBatch;
          }
        } finally {
          await close();
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The sheet `wanted` names (its name, any case) or numbers (from 1, in tab order), else
 * the first visible sheet.
 * @throws UsageError when there is no such sheet, listing those there are.
 */
function chooseSheet(name: string, sheets: readonly WorkbookSheet[], wanted: string | undefined): WorkbookSheet {
  if (sheets.length === 0) throw new InputRejectedError(`${name} is an Excel workbook without sheets.`);
  if (wanted === undefined) return sheets.find((sheet) => sheet.visible) ?? sheets[0]!;
  const lower = wanted.trim().toLowerCase();
  const named = sheets.find((sheet) => sheet.name.toLowerCase() === lower);
  if (named) return named;
  const number = /^\d+$/.test(lower) ? Number(lower) : 0;
  if (number >= 1 && number <= sheets.length) return sheets[number - 1]!;
  const list = sheets.map((sheet, i) => `${i + 1} "${sheet.name}"${sheet.visible ? "" : " (hidden)"}`).join(", ");
  throw new UsageError(`${name} has no sheet "${wanted}" (sheets: ${list}).`, {
    hint: "Pass --sheet with one of the names listed, or a sheet number from 1.",
  });
}

/**
 * The chosen sheet's rows as exceljs reads them, the workbook's shared strings put in `strings`
 * on the way; the reader stops once the sheet is read.
 */
async function* sheetRows(
  reader: ExcelJS.stream.xlsx.WorkbookReader,
  strings: SharedStringTable,
  sheet: WorkbookSheet,
  name: string,
): AsyncGenerator<SheetRow> {
  const items = reader.parse() as AsyncGenerator<unknown, void, undefined>;
  try {
    for (let next = await items.next(); !next.done; next = await items.next()) {
      const shared = sharedStringOf(next.value);
      if (shared !== undefined) strings.add(shared);
      const worksheet = worksheetOf(next.value);
      // The streaming reader names a sheet from workbook.xml (exceljs 4.2's fix of its issue #1364); the typings omit `name`.
      if (worksheet === undefined || (worksheet as unknown as { name?: string }).name !== sheet.name) continue;
      yield* worksheet;
      return;
    }
  } catch (error) {
    const rejection = new InputRejectedError(`${name} cannot be read as an Excel workbook: ${(error as Error).message}.`, {
      hint: "Open it in Excel and save it again as Excel Workbook (.xlsx), or as CSV UTF-8.",
      cause: error,
    });
    // A TypeError is exceljs failing on its own state: a part it never read (see READ_ATTEMPTS).
    throw error instanceof TypeError ? missedPart(rejection) : rejection;
  } finally {
    await items.return();
  }
  throw new InputRejectedError(`Sheet "${sheet.name}" of ${name} holds no cells bulkcheck can read (a chart sheet?).`, {
    hint: "Choose a sheet of rows with --sheet.",
  });
}

function worksheetOf(item: unknown): ExcelJS.stream.xlsx.WorksheetReader | undefined {
  if (typeof item !== "object" || item === null || !("eventType" in item) || item.eventType !== "worksheet") return undefined;
  return "value" in item ? (item.value as ExcelJS.stream.xlsx.WorksheetReader) : undefined;
}

function recordOfRow(row: SheetRow, strings: SharedStringTable, name: string): SourceRecord {
  const fields: string[] = [];
  row.eachCell((cell, column) => {
    fields[column - 1] = textOf(cell, strings, name);
  });
  for (let i = 0; i < fields.length; i++) fields[i] ??= "";
  return { line: row.number, fields, raw: delimitedLine(fields, ",", true).slice(0, -1) };
}

/**
 * A cell's text (cellText), a shared string's from `strings`. An index the table does not
 * hold means the reader missed the shared strings part (see READ_ATTEMPTS): the sheet is read
 * again, or refused, rather than read as blank cells.
 */
function textOf(cell: ExcelJS.Cell, strings: SharedStringTable, name: string): string {
  const value: unknown = cell.value;
  if (typeof value === "object" && value !== null && "sharedString" in value) {
    const text = strings.get(value.sharedString as number);
    if (text !== undefined) return cellText(text, undefined);
    const message = `${name} cannot be read: its shared strings (the text of its cells) were not found by the workbook reader.`;
    throw missedPart(
      new InputRejectedError(message, { hint: "Open it in Excel and save it again as Excel Workbook (.xlsx), or save it as CSV UTF-8." }),
    );
  }
  return cellText(cell.value, cell.numFmt);
}

function blankRecord(line: number): SourceRecord {
  return { line, fields: [], raw: "" };
}

function isEmpty(row: SheetRow): boolean {
  let empty = true;
  row.eachCell(() => {
    empty = false;
  });
  return empty;
}

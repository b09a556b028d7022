import { delimitedLine } from "../csv/write.js";
import type { CellBatch, SourceRecord } from "../csv/record-reader.js";
import { DEFAULT_ZIP_LIMITS } from "../results/unzip.js";
import { detectHeader, SAMPLE_ROWS } from "./dialect.js";
import type { ListFile } from "./input-source.js";
import type { KnownDialect, RowSource } from "./row-source.js";
import { readSharedStrings } from "./shared-strings.js";
import { SheetCells, type SheetRow } from "./workbook-cells.js";
import { chooseSheet, kindName, sheetList, type Workbook, type WorkbookSheet } from "./workbook-sheets.js";
import { GENERAL_FORMATS, readCellFormats } from "./workbook-styles.js";
import { InputRejectedError } from "../errors.js";

/** Rows per batch handed on: the size of a text block's worth of a typical export. */
const BATCH_ROWS = 2048;
/** Text per batch (and in the sample) past which it is handed on sooner: rows of many long cells. */
const BATCH_CHARS = 1 << 20;

/**
 * Opens one sheet of a workbook as rows: the sheet named or numbered by `known.sheet`, else
 * the first visible worksheet. The shared strings and styles are read first (wherever the
 * zip holds them), then the sheet streams: each row's cells read as cellText shows them,
 * rows numbered as in Excel, a row the sheet skips a blank record (as an empty CSV line
 * is), and the empty rows above the first filled one not read. The header is detected as
 * in a CSV. A record's `raw` is its fields as a CSV line. Aborting `signal` stops the
 * reading (with its reason) within a piece of the zip. Takes over `workbook.package`.
 */
export async function openWorkbookRows(
  file: ListFile,
  workbook: Workbook,
  known?: Partial<KnownDialect>,
  signal?: AbortSignal,
): Promise<RowSource> {
  const pkg = workbook.package;
  /** The sheet's XML as it is read, once it is. */
  let sheetXml: AsyncGenerator<void, void, undefined> | undefined;
  const close = async () => {
    await sheetXml?.return();
    pkg.close();
  };
  try {
    const sheet = chooseSheet(file.name, workbook.sheets, known?.sheet);
    const part = worksheetPart(workbook, sheet);
    const strings = workbook.sharedStrings === undefined ? undefined : await readSharedStrings(pkg, workbook.sharedStrings, signal);
    const formats = workbook.styles === undefined ? GENERAL_FORMATS : await readCellFormats(pkg, workbook.styles, signal);
    const cells = new SheetCells({
      strings,
      formats,
      date1904: workbook.date1904,
      refuse: (problem) => pkg.unreadable(`sheet "${sheet.name}" (${part}) ${problem}`),
    });
    const xml = pkg.readXml(part, cells, DEFAULT_ZIP_LIMITS, signal);
    sheetXml = xml;
    /** The next rows the sheet's XML finishes (none when it ends). */
    const nextRows = async (): Promise<SheetRow[] | undefined> => {
      for (let next = await xml.next(); !next.done; next = await xml.next()) {
        const rows = cells.take();
        if (rows.length > 0) return rows;
      }
      const rows = cells.take();
      return rows.length > 0 ? rows : undefined;
    };
    const first: SourceRecord[] = [];
    let sampled = 0;
    /** Rows read past the sample, handed on first. */
    let rest: SheetRow[] = [];
    sampling: for (let rows = await nextRows(); rows !== undefined; rows = await nextRows()) {
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        if (first.length === 0 && row.fields.length === 0) continue;
        const line = first.length === 0 ? row.number : first.at(-1)!.line + 1;
        for (let blank = line; blank < row.number && first.length <= SAMPLE_ROWS; blank++) first.push(blankRecord(blank));
        if (first.length > SAMPLE_ROWS) {
          rest = rows.slice(i); // after blank rows that filled the sample
          break sampling;
        }
        const record = recordOfRow(row);
        first.push(record);
        sampled += record.raw.length;
        if (first.length > SAMPLE_ROWS || sampled > BATCH_CHARS) {
          rest = rows.slice(i + 1);
          break sampling;
        }
      }
    }
    const hasHeader = known?.hasHeader ?? detectHeader(first, "csv");
    const header = hasHeader ? first[0] : undefined;
    const buffered = first.slice(hasHeader ? 1 : 0);
    const sample = buffered.slice(0, SAMPLE_ROWS);
    const columnCount = Math.max(1, header?.fields.length ?? 0, ...sample.map((r) => r.fields.length));
    let nextLine = (first.at(-1)?.line ?? 0) + 1;

    /** The rows after the buffered ones, with the sheet's skipped rows as blank ones, in batches. */
    async function* later<T>(blank: (line: number) => T, item: (row: SheetRow) => T): AsyncGenerator<T[], void, undefined> {
      let batch: T[] = [];
      let chars = 0;
      for (let rows: SheetRow[] | undefined = rest; rows !== undefined; rows = await nextRows()) {
        for (const row of rows) {
          for (; nextLine < row.number; nextLine++) batch.push(blank(nextLine));
          batch.push(item(row));
          chars += row.chars;
          nextLine = row.number + 1;
        }
        if (batch.length >= BATCH_ROWS || chars >= BATCH_CHARS) {
          yield batch;
          batch = [];
          chars = 0;
        }
      }
      if (batch.length > 0) yield batch;
    }
    async function* batches(): AsyncGenerator<SourceRecord[], void, undefined> {
      try {
        if (buffered.length > 0) yield buffered;
        yield* later(blankRecord, recordOfRow);
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
      async *pieces(column, idColumn) {
        const withIds = (batch: CellBatch, id: () => string[]): CellBatch => (idColumn === undefined ? batch : { ...batch, ids: id() });
        try {
          if (buffered.length > 0) {
            const sampled = { lines: buffered.map((r) => r.line), cells: buffered.map((r) => r.fields[column] ?? "") };
            yield withIds(sampled, () => buffered.map((r) => r.fields[idColumn!] ?? ""));
          }
          cells.columns = new Set(idColumn === undefined ? [column] : [column, idColumn]);
          const cell = (row: SheetRow) => ({
            line: row.number,
            cell: row.fields[column] ?? "",
            id: idColumn === undefined ? "" : (row.fields[idColumn] ?? ""),
          });
          for await (const batch of later((line) => ({ line, cell: "", id: "" }), cell)) {
            const read = { lines: batch.map((c) => c.line), cells: batch.map((c) => c.cell) } satisfies CellBatch;
            yield withIds(read, () => batch.map((c) => c.id));
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
 * The part holding a sheet's cells.
 * @throws InputRejectedError for a chart (or dialog, or macro) sheet, or one whose part the workbook does not name.
 */
function worksheetPart(workbook: Workbook, sheet: WorkbookSheet): string {
  if (sheet.kind !== "worksheet") {
    throw new InputRejectedError(`Sheet "${sheet.name}" of ${workbook.package.name} is a ${kindName(sheet.kind)}, which holds no cells.`, {
      hint: `Choose a sheet of rows with --sheet (sheets: ${sheetList(workbook.sheets)}).`,
    });
  }
  if (sheet.part === undefined) throw workbook.package.unreadable(`sheet "${sheet.name}" names no part that holds its cells`);
  return sheet.part;
}

function recordOfRow(row: SheetRow): SourceRecord {
  const fields = row.fields;
  for (let i = 0; i < fields.length; i++) fields[i] ??= "";
  return { line: row.number, fields, raw: delimitedLine(fields, ",", true).slice(0, -1) };
}

function blankRecord(line: number): SourceRecord {
  return { line, fields: [], raw: "" };
}

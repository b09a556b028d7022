import ExcelJS from "exceljs";

/**
 * Reads an .xlsx back with exceljs (an independent reader, the one analysts' tools
 * most often use in Node): each sheet's rows as plain values, a blank cell as "".
 * `formulas` counts cells a spreadsheet would calculate; `kinds` names each cell's type.
 */
export interface SheetContent {
  name: string;
  rows: Array<Array<string | number | boolean>>;
  kinds: Array<Array<"string" | "number" | "boolean" | "blank" | "other">>;
  /** Each cell's number format ("" for General). */
  numFmts: string[][];
  formulas: number;
}

export async function readWorkbook(source: string | Buffer): Promise<SheetContent[]> {
  const workbook = new ExcelJS.Workbook();
  if (typeof source === "string") await workbook.xlsx.readFile(source);
  else await workbook.xlsx.load(source as unknown as ArrayBuffer);
  return workbook.worksheets.map((sheet) => {
    const content: SheetContent = { name: sheet.name, rows: [], kinds: [], numFmts: [], formulas: 0 };
    const width = sheet.columnCount;
    for (let r = 1; r <= sheet.rowCount; r++) {
      const row = sheet.getRow(r);
      const values: Array<string | number | boolean> = [];
      const kinds: SheetContent["kinds"][number] = [];
      const numFmts: string[] = [];
      for (let c = 1; c <= width; c++) {
        const cell = row.getCell(c);
        numFmts.push(cell.numFmt ?? "");
        if (cell.type === ExcelJS.ValueType.Formula) content.formulas++;
        const value = cell.value;
        if (value === null || value === undefined) {
          values.push("");
          kinds.push("blank");
        } else if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
          values.push(value);
          kinds.push(typeof value as "string" | "number" | "boolean");
        } else {
          values.push(JSON.stringify(value));
          kinds.push("other");
        }
      }
      // A row that is all blank (between Summary tables) reads as no row.
      content.rows.push(values);
      content.kinds.push(kinds);
      content.numFmts.push(numFmts);
    }
    return content;
  });
}

/** A Summary sheet's rows as label → value (the first two cells of each row). */
export function summaryPairs(sheet: SheetContent): Map<string, string | number | boolean> {
  return new Map(sheet.rows.filter((row) => row[0] !== "").map((row) => [String(row[0]), row[1] ?? ""]));
}

/** A cell to write: a value exceljs writes as Excel would (numbers typed, text as shared strings), with an optional number format. */
export type CellSpec = ExcelJS.CellValue | { value: ExcelJS.CellValue; numFmt: string };

export interface SheetSpec {
  name: string;
  /** Rows from row 1; `undefined` leaves the row out of the sheet, as Excel does for a row never filled. */
  rows: ReadonlyArray<ReadonlyArray<CellSpec> | undefined>;
  hidden?: boolean;
}

/** Writes a workbook with exceljs's (non-streaming) writer, which stores cells as Excel does. */
export async function writeWorkbook(path: string, sheets: readonly SheetSpec[]): Promise<string> {
  const workbook = new ExcelJS.Workbook();
  for (const spec of sheets) {
    const sheet = workbook.addWorksheet(spec.name, spec.hidden ? { state: "hidden" } : {});
    spec.rows.forEach((cells, r) => {
      if (cells === undefined) return;
      cells.forEach((spec, c) => {
        const cell = sheet.getCell(r + 1, c + 1);
        if (spec !== null && typeof spec === "object" && "numFmt" in spec) {
          cell.value = spec.value;
          cell.numFmt = spec.numFmt;
        } else {
          cell.value = spec;
        }
      });
    });
  }
  await workbook.xlsx.writeFile(path);
  return path;
}

import { columnName, MAX_CELL_CHARS, MAX_SHEET_ROWS } from "../results/xlsx-xml.js";
import { cellText, excelDate, isoDate, MAX_STORED_CELL_CHARS, type WorkbookValue } from "./cell-text.js";
import type { SharedStringTable } from "./shared-strings.js";
import type { CellFormats } from "./workbook-styles.js";
import type { XmlHandlers } from "./workbook-xml.js";

/** A row of a sheet: its number (from 1, as Excel numbers rows) and its cells' text by 0-based column; a hole is an empty cell. */
export interface SheetRow {
  number: number;
  fields: string[];
  /** The characters of its fields. */
  chars: number;
}

/** What reading a sheet's cells needs from the rest of the workbook. */
export interface SheetContext {
  /** The shared strings, when the workbook has a part of them. */
  strings: SharedStringTable | undefined;
  formats: CellFormats;
  /** The workbook counts dates from 1904 (`<workbookPr date1904="1"/>`, old Mac workbooks). */
  date1904: boolean;
  /** The error for a sheet that cannot be read: `problem` says what is wrong ("has row 3 after row 5"). */
  refuse(problem: string): Error;
}

/** Excel's last column, XFD. */
const MAX_COLUMNS = 16_384;
/** No real row is this long (nor a CSV record, src/csv/record-reader.ts): past it a row is refused, not held. */
const MAX_ROW_CHARS = 1 << 20;

/**
 * The handlers reading a worksheet part's cells (`<sheetData><row r><c r t s><v>…</v>
 * <is>…</is></c>…`) into rows, each cell as cellText shows it: a shared string (`t="s"`)
 * from the table, an inline string's text (rich text's runs joined, phonetic guides left
 * out), a formula's cached value (never the formula), a number with its style's format
 * (a date format makes it a date), a boolean, an error code, an ISO date (`t="d"`). Rows
 * and cells without their `r` follow the one before, as the format allows. Finished rows
 * wait in take() for the reader, which takes them after each piece of XML.
 */
export class SheetCells implements XmlHandlers {
  /** The columns (0-based) whose cells are read; undefined reads every column. Other cells are skipped unread. */
  columns: ReadonlySet<number> | undefined;
  #rows: SheetRow[] = [];
  #inSheetData = false;
  #row: SheetRow | undefined;
  #lastRow = 0;
  #lastColumn = -1;
  /** The cell being read, when its column is read. */
  #cell: { column: number; type: string | undefined; style: string | undefined } | undefined;
  #value: string | undefined;
  #inline: string | undefined;
  /** Which text is being read: a `<v>`, an inline string's `<t>`, or none. */
  #capture: "value" | "inline" | undefined;
  #inPhonetic = false;

  constructor(private readonly context: SheetContext) {}

  /** The rows finished since the last call, in sheet order. */
  take(): SheetRow[] {
    const rows = this.#rows;
    this.#rows = [];
    return rows;
  }

  open(name: string, attributes: Readonly<Record<string, string>>): void {
    switch (name) {
      case "c":
        if (this.#row !== undefined) this.#openCell(attributes);
        return;
      case "v":
        if (this.#cell !== undefined) {
          this.#value = "";
          this.#capture = "value";
        }
        return;
      case "is":
        if (this.#cell !== undefined) this.#inline = "";
        return;
      case "t":
        if (this.#inline !== undefined && !this.#inPhonetic) this.#capture = "inline";
        return;
      case "rPh":
        this.#inPhonetic = true;
        return;
      case "row":
        if (this.#inSheetData) this.#openRow(attributes.r);
        return;
      case "sheetData":
        this.#inSheetData = true;
        return;
    }
  }

  close(name: string): void {
    switch (name) {
      case "v":
      case "t":
        this.#capture = undefined;
        return;
      case "c":
        if (this.#cell !== undefined) this.#closeCell(this.#cell.column);
        this.#cell = this.#value = this.#inline = undefined;
        return;
      case "rPh":
        this.#inPhonetic = false;
        return;
      case "row":
        if (this.#row !== undefined) this.#rows.push(this.#row);
        this.#row = undefined;
        return;
      case "sheetData":
        this.#inSheetData = false;
        return;
    }
  }

  text(text: string): void {
    if (this.#capture === undefined) return;
    const stored = this.#capture === "value" ? (this.#value += text) : (this.#inline += text);
    if (stored.length > MAX_STORED_CELL_CHARS) throw this.#tooLong(this.#cell!.column);
  }

  #openRow(r: string | undefined): void {
    const number = r === undefined ? this.#lastRow + 1 : Number(r);
    if (!Number.isInteger(number) || number < 1 || number > MAX_SHEET_ROWS) {
      throw this.context.refuse(`has a row numbered "${r}", outside Excel's rows 1 to ${MAX_SHEET_ROWS.toLocaleString("en-US")}`);
    }
    if (number <= this.#lastRow) throw this.context.refuse(`has row ${number} after row ${this.#lastRow}: its rows are out of order`);
    this.#lastRow = number;
    this.#lastColumn = -1;
    this.#row = { number, fields: [], chars: 0 };
  }

  #openCell(attributes: Readonly<Record<string, string>>): void {
    const reference = attributes.r;
    const column = reference === undefined ? this.#lastColumn + 1 : columnOf(reference);
    if (column < 0 || column >= MAX_COLUMNS) {
      throw this.context.refuse(`has a cell "${reference}" in row ${this.#row!.number} outside Excel's columns A to XFD`);
    }
    this.#lastColumn = column;
    if (this.columns === undefined || this.columns.has(column)) this.#cell = { column, type: attributes.t, style: attributes.s };
  }

  #closeCell(column: number): void {
    const format = this.context.formats.of(Number(this.#cell!.style ?? 0));
    const text = cellText(this.#valueOf(column, format.date), format.code);
    if (text === "") return;
    if (text.length > MAX_CELL_CHARS) throw this.#tooLong(column);
    const row = this.#row!;
    row.chars += text.length;
    if (row.chars > MAX_ROW_CHARS) throw this.context.refuse(`has a row, ${row.number}, with more than 1 MiB of text`);
    row.fields[column] = text;
  }

  /** The cell's value by its type (`t`); a cell without a value is null. */
  #valueOf(column: number, isDate: boolean): WorkbookValue {
    const value = this.#value;
    switch (this.#cell!.type) {
      case "s":
        return value === undefined || value === "" ? null : this.#sharedString(value, column);
      case "inlineStr":
        return this.#inline ?? value;
      case "str":
        return value;
      case "b":
        return value === undefined || value === "" ? null : value === "1" || value === "true";
      case "e":
        return value === undefined || value === "" ? null : { error: value };
      case "d":
        return value === undefined || value === "" ? null : (isoDate(value) ?? value);
      default: {
        if (value === undefined || value.trim() === "") return null;
        const number = Number(value);
        if (!Number.isFinite(number)) return value; // not a number after all: shown as written
        return isDate ? (excelDate(number, this.context.date1904) ?? number) : number;
      }
    }
  }

  #sharedString(value: string, column: number): string {
    const text = this.context.strings?.get(Number(value));
    if (text !== undefined) return text;
    const held = this.context.strings?.size ?? 0;
    throw this.context.refuse(
      `has a cell, ${this.#reference(column)}, that refers to shared string ${value}, but the workbook holds ${held}`,
    );
  }

  #tooLong(column: number): Error {
    const limit = MAX_CELL_CHARS.toLocaleString("en-US");
    return this.context.refuse(`has a cell, ${this.#reference(column)}, of more than ${limit} characters, Excel's limit for a cell`);
  }

  #reference(column: number): string {
    return `${columnName(column)}${this.#row!.number}`;
  }
}

/**
 * The 0-based column of a cell reference (`B7` → 1), from its letters; -1 without letters,
 * MAX_COLUMNS for more letters than Excel's columns have.
 */
function columnOf(reference: string): number {
  let column = 0;
  let i = 0;
  for (; i < reference.length && i <= 3; i++) {
    const letter = reference.charCodeAt(i) & ~0x20; // upper case
    if (letter < 65 || letter > 90) break;
    column = column * 26 + (letter - 64);
  }
  if (i > 3) return MAX_COLUMNS;
  return column - 1;
}

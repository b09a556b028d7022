import { MICROS_PER_USD } from "../spec/products.js";

/**
 * The SpreadsheetML pieces of an .xlsx written by hand (ECMA-376 Part 1): cells, rows
 * and the workbook's fixed parts. Every string is an inline string cell and every
 * boolean a boolean cell, so nothing a result holds can become a formula.
 */

/** Excel's limits: rows in a sheet (header included) and characters in a cell. */
export const MAX_SHEET_ROWS = 1_048_576;
export const MAX_CELL_CHARS = 32_767;

/** A cell's value: text, a count, a boolean, or an amount of money. */
export type CellValue = string | number | boolean | UsdAmount;

/** An amount in USD, written as a number with a currency format (USD_FORMAT), so a spreadsheet can add it up. */
export interface UsdAmount {
  micros: number;
}

/**
 * Characters XML 1.0 cannot hold even as references (C0 controls but tab, line feed and
 * carriage return; U+FFFE, U+FFFF), and a literal `_xHHHH_`, which Excel would read as an
 * escape: each becomes an ST_Xstring escape (`_x000B_`, `_x005F_` for the underscore), as
 * Excel writes them.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const NEEDS_ESCAPE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|_(?=x[0-9A-Fa-f]{4}_)/g;
/** Markup, and the carriage return, which an XML parser would turn into a line feed unless it is a reference. */
const MARKUP = /[&<>\r]/g;
const ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;" };

function hex4(char: string): string {
  return `_x${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}_`;
}

/** Anything NEEDS_ESCAPE or MARKUP would change: most values have none, and are written as they are. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const ANY_ESCAPE = /[\u0000-\u0008\u000B-\u001F\uFFFE\uFFFF&<>]|_x/;

/** `text` as the content of an XML element: markup escaped, and what XML cannot hold written as Excel's escapes. */
export function xmlText(text: string): string {
  if (!ANY_ESCAPE.test(text)) return text;
  // A lone surrogate needs nothing here: encoding the XML as UTF-8 writes it as U+FFFD.
  return text.replace(NEEDS_ESCAPE, hex4).replace(MARKUP, (char) => ENTITIES[char]!);
}

/** `text` as a double-quoted XML attribute value. */
function xmlAttribute(text: string): string {
  return xmlText(text).replaceAll('"', "&quot;");
}

/** Column letters already worked out, by index: a sheet writes the same few on every row. */
const COLUMN_NAMES: string[] = [];

/** A 0-based column index as Excel's letters: 0 → A, 25 → Z, 26 → AA. */
export function columnName(index: number): string {
  return (COLUMN_NAMES[index] ??= lettersOf(index));
}

function lettersOf(index: number): string {
  let name = "";
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/**
 * One cell at `ref` (e.g. "B2"); `style` is an index into styles.xml's cell formats.
 * An empty string writes no cell at all: Excel's blank.
 */
export function cellXml(ref: string, value: CellValue, style = 0): string {
  if (typeof value === "object") return `<c r="${ref}" s="${USD}"><v>${value.micros / MICROS_PER_USD}</v></c>`;
  const s = style === 0 ? "" : ` s="${style}"`;
  if (typeof value === "boolean") return `<c r="${ref}"${s} t="b"><v>${value ? 1 : 0}</v></c>`;
  if (typeof value === "number") return `<c r="${ref}"${s}><v>${value}</v></c>`;
  if (value === "") return "";
  const space = /^\s|\s$/.test(value) ? ' xml:space="preserve"' : "";
  return `<c r="${ref}"${s} t="inlineStr"><is><t${space}>${xmlText(value)}</t></is></c>`;
}

/** One row (1-based `number`) of cells, in column order from A. */
export function rowXml(number: number, cells: readonly CellValue[], style = 0): string {
  let xml = `<row r="${number}">`;
  for (let i = 0; i < cells.length; i++) xml += cellXml(`${columnName(i)}${number}`, cells[i]!, style);
  return `${xml}</row>`;
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const PACKAGE_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships";

/** Style index of a bold cell (a header) in STYLES_XML. */
export const BOLD = 1;
/** Style index of a USD amount: "$" and thousands separators, at least two decimals and up to six (exact to the micro). */
const USD = 2;

/**
 * A worksheet's opening: the header row frozen when `freezeHeader`, and column widths
 * (in characters) when given.
 */
export function sheetStart(options: { widths?: readonly number[]; freezeHeader?: boolean } = {}): string {
  const pane = options.freezeHeader
    ? '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>'
    : "";
  const widths = options.widths ?? [];
  const cols =
    widths.length === 0
      ? ""
      : `<cols>${widths.map((width, i) => `<col min="${i + 1}" max="${i + 1}" width="${width}" customWidth="1"/>`).join("")}</cols>`;
  return `${XML_DECLARATION}<worksheet xmlns="${MAIN_NS}" xmlns:r="${REL_NS}">${pane}${cols}<sheetData>`;
}

export const SHEET_END = "</sheetData></worksheet>";

/** The parts that name the sheets: content types, relationships and the workbook itself. */
export function workbookParts(sheetNames: readonly string[]): Record<string, string> {
  const sheets = sheetNames.map((name, i) => ({ name, id: i + 1, path: `worksheets/sheet${i + 1}.xml` }));
  const sheetType = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml";
  return {
    "[Content_Types].xml":
      `${XML_DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
      sheets.map((sheet) => `<Override PartName="/xl/${sheet.path}" ContentType="${sheetType}"/>`).join("") +
      "</Types>",
    "_rels/.rels":
      `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_REL_NS}">` +
      `<Relationship Id="rId1" Type="${REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    "xl/_rels/workbook.xml.rels":
      `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_REL_NS}">` +
      sheets.map((sheet) => `<Relationship Id="rId${sheet.id}" Type="${REL_NS}/worksheet" Target="${sheet.path}"/>`).join("") +
      `<Relationship Id="rId${sheets.length + 1}" Type="${REL_NS}/styles" Target="styles.xml"/></Relationships>`,
    "xl/workbook.xml":
      `${XML_DECLARATION}<workbook xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><sheets>` +
      sheets.map((sheet) => `<sheet name="${xmlAttribute(sheet.name)}" sheetId="${sheet.id}" r:id="rId${sheet.id}"/>`).join("") +
      "</sheets></workbook>",
    "xl/styles.xml": STYLES_XML,
  };
}

/** Three cell formats: 0 plain, 1 bold (BOLD), 2 USD (USD, number format 164, the first custom one). */
const STYLES_XML =
  `${XML_DECLARATION}<styleSheet xmlns="${MAIN_NS}">` +
  '<numFmts count="1"><numFmt numFmtId="164" formatCode="&quot;$&quot;#,##0.00####"/></numFmts>' +
  '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>' +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
  '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>' +
  '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>' +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
  "</styleSheet>";

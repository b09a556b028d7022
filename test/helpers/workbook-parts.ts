import { constants, deflateRawSync } from "node:zlib";
import { XmlReader, type XmlHandlers } from "../../src/prepare/workbook-xml.js";
import { mulberry32 } from "../../src/sandbox/random.js";

/**
 * Workbooks written part by part, for what no spreadsheet writer here produces on demand:
 * cells of every type in raw SpreadsheetML, odd relationship targets, parts in any zip
 * order, broken and hostile parts. Real writers' files are in test/fixtures/workbooks.
 */

export const MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
export const REL_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const PACKAGE_RELS_NS = "http://schemas.openxmlformats.org/package/2006/relationships";
const CONTENT_TYPES =
  '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/></Types>';

export interface WorkbookSpec {
  /** Each sheet's name and the content of its `<sheetData>` (rows of cells), in tab order. */
  sheets?: ReadonlyArray<{ name: string; rows: string; state?: "hidden" | "veryHidden" }>;
  /** The shared strings part's `<si>` elements, or strings each written as `<si><t>…</t></si>`; no part when absent. */
  sharedStrings?: string | readonly string[];
  /** The styles part's content inside `<styleSheet>`; no part when absent. */
  styles?: string;
  /** Extra content of `<workbook>` before `<sheets>` (`<workbookPr date1904="1"/>`). */
  workbookPr?: string;
  /** How the workbook's relationships name its parts: relative (as Excel writes) or absolute (as openpyxl writes). */
  targets?: "relative" | "absolute";
}

/** The parts of a workbook (name → content), in the order Excel writes them: shared strings after the sheets. */
export function workbookParts(spec: WorkbookSpec): Record<string, string> {
  const sheets = spec.sheets ?? [{ name: "Sheet1", rows: "" }];
  const target = (path: string) => (spec.targets === "absolute" ? `/xl/${path}` : path);
  const relationship = (id: string, type: string, path: string) =>
    `<Relationship Id="${id}" Type="${REL_TYPE}/${type}" Target="${target(path)}"/>`;
  const parts: Record<string, string> = {
    "[Content_Types].xml": CONTENT_TYPES,
    "_rels/.rels": `<Relationships xmlns="${PACKAGE_RELS_NS}"><Relationship Id="rId1" Type="${REL_TYPE}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    "xl/workbook.xml":
      `<workbook xmlns="${MAIN_NS}" xmlns:r="${REL_TYPE}">${spec.workbookPr ?? ""}<sheets>` +
      sheets
        .map(
          (sheet, i) =>
            `<sheet name="${sheet.name}" sheetId="${i + 1}"${sheet.state ? ` state="${sheet.state}"` : ""} r:id="rId${i + 1}"/>`,
        )
        .join("") +
      "</sheets></workbook>",
    "xl/_rels/workbook.xml.rels":
      `<Relationships xmlns="${PACKAGE_RELS_NS}">` +
      sheets.map((_, i) => relationship(`rId${i + 1}`, "worksheet", `worksheets/sheet${i + 1}.xml`)).join("") +
      (spec.styles === undefined ? "" : relationship("rIdStyles", "styles", "styles.xml")) +
      (spec.sharedStrings === undefined ? "" : relationship("rIdStrings", "sharedStrings", "sharedStrings.xml")) +
      "</Relationships>",
  };
  sheets.forEach((sheet, i) => {
    parts[`xl/worksheets/sheet${i + 1}.xml`] = `<worksheet xmlns="${MAIN_NS}"><sheetData>${sheet.rows}</sheetData></worksheet>`;
  });
  if (spec.styles !== undefined) parts["xl/styles.xml"] = `<styleSheet xmlns="${MAIN_NS}">${spec.styles}</styleSheet>`;
  if (spec.sharedStrings !== undefined) {
    const items =
      typeof spec.sharedStrings === "string" ? spec.sharedStrings : spec.sharedStrings.map((text) => `<si><t>${text}</t></si>`).join("");
    parts["xl/sharedStrings.xml"] = `<sst xmlns="${MAIN_NS}">${items}</sst>`;
  }
  return parts;
}

/** Reads one part's XML text through `handlers`, as the workbook reader does (a problem thrown as a plain Error); returns them. */
export function readPartXml<T extends XmlHandlers>(xml: string, handlers: T): T {
  const reader = new XmlReader(handlers, (problem) => new Error(problem));
  reader.write(xml);
  reader.close();
  return handlers;
}

/** `length` characters of base64 that deflate hardly shrinks (seeded random bytes), for parts no ratio limit stops. */
export function noise(length: number, seed = 0): string {
  const random = mulberry32(seed);
  const bytes = Buffer.alloc(Math.ceil((length * 3) / 4), 0);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes.toString("base64").slice(0, length);
}

/** A zip entry's raw deflate data and the size it inflates to (its CRC is left 0: nothing reads that far). */
export interface DeflatedEntry {
  data: Buffer;
  size: number;
}

/**
 * `head`, `unit` `times` over and `tail`, deflated without ever holding the whole: each piece
 * is deflated once with a full flush (which resets the window, so copies of it can follow
 * one another), the unit's copies repeated, and a final empty block closes the stream. A
 * gigabyte of XML comes to about two megabytes.
 */
export function deflatedRepeat(head: string, unit: string, times: number, tail: string): DeflatedEntry {
  const flushed = (text: string) => deflateRawSync(text, { finishFlush: constants.Z_FULL_FLUSH });
  const repeated = flushed(unit);
  const data = Buffer.concat([flushed(head), ...Array.from({ length: times }, () => repeated), flushed(tail), FINAL_EMPTY_BLOCK]);
  return { data, size: Buffer.byteLength(head) + Buffer.byteLength(unit) * times + Buffer.byteLength(tail) };
}

/** A final deflate block with fixed codes holding only its end: the bits 1, 01, 0000000. */
const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);

/** A zip entry stored as it is, without compression (as some writers store small parts). */
export interface StoredEntry {
  stored: string | Buffer;
}

/**
 * A zip of `parts` written by hand (yazl deflates what it is given, and a bomb must not be
 * inflated to be made): plain text deflated as usual, a DeflatedEntry as it is, a StoredEntry uncompressed.
 */
export function zipWithDeflated(parts: Record<string, string | DeflatedEntry | StoredEntry>): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(parts)) {
    const entry =
      typeof content === "string"
        ? { data: deflateRawSync(content), size: Buffer.byteLength(content), method: 8 }
        : "stored" in content
          ? { data: Buffer.from(content.stored), size: Buffer.from(content.stored).length, method: 0 }
          : { ...content, method: 8 };
    const fileName = Buffer.from(name);
    const header = (signature: number, length: number) => {
      const buffer = Buffer.alloc(length);
      buffer.writeUInt32LE(signature, 0);
      return buffer;
    };
    const local = header(0x04034b50, 30);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(entry.method, 8);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(entry.size, 22);
    local.writeUInt16LE(fileName.length, 26);
    const record = header(0x02014b50, 46);
    record.writeUInt16LE(20, 4); // made by
    record.writeUInt16LE(20, 6); // needed
    record.writeUInt16LE(entry.method, 10);
    record.writeUInt16LE(0x21, 14);
    record.writeUInt32LE(entry.data.length, 20);
    record.writeUInt32LE(entry.size, 24);
    record.writeUInt16LE(fileName.length, 28);
    record.writeUInt32LE(offset, 42);
    locals.push(local, fileName, entry.data);
    central.push(record, fileName);
    offset += local.length + fileName.length + entry.data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(parts).length, 8);
  end.writeUInt16LE(Object.keys(parts).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

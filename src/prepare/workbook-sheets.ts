import { text } from "node:stream/consumers";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import { InputRejectedError } from "../errors.js";

/** A sheet of a workbook, in tab order. */
export interface WorkbookSheet {
  name: string;
  /** False for a sheet hidden in Excel (`state="hidden"` or `"veryHidden"`). */
  visible: boolean;
}

const WORKBOOK_PART = "xl/workbook.xml";
const BINARY_WORKBOOK_PART = "xl/workbook.bin";
/** workbook.xml lists sheets and defined names: a few KiB; anything near this is not a workbook to read. */
const MAX_WORKBOOK_XML_BYTES = 16 * 1024 * 1024;

/**
 * The sheets of a zip archive that is an Excel workbook (it holds `xl/workbook.xml`, as
 * .xlsx, .xlsm and .xltx files do, whatever the file is called), in tab order; undefined
 * for any other zip, which the text reader then refuses by its signature. Only the zip's
 * directory and workbook.xml are read.
 * @throws InputRejectedError for a binary workbook (.xlsb) or a workbook part that cannot be read.
 */
export async function workbookSheets(path: string, name: string): Promise<WorkbookSheet[] | undefined> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
  } catch {
    return undefined; // not a zip after all: read as text, whose signature check says what it is
  }
  try {
    let workbook: Entry | undefined;
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName === BINARY_WORKBOOK_PART) {
        throw new InputRejectedError(`${name} is an Excel binary workbook (.xlsb), which bulkcheck cannot read.`, {
          hint: "Open it in Excel and save it as Excel Workbook (.xlsx) or CSV UTF-8.",
        });
      }
      if (entry.fileName === WORKBOOK_PART) workbook = entry;
    }
    if (workbook === undefined) return undefined;
    if (workbook.uncompressedSize > MAX_WORKBOOK_XML_BYTES || !workbook.canDecodeFileData()) throw unreadable(name);
    const xml = await text(await zip.openReadStreamPromise(workbook));
    return sheetsOfWorkbookXml(xml);
  } catch (error) {
    if (error instanceof InputRejectedError) throw error;
    throw unreadable(name, error);
  } finally {
    zip.close();
  }
}

function unreadable(name: string, cause?: unknown): InputRejectedError {
  return new InputRejectedError(`${name} looks like an Excel workbook, but its list of sheets cannot be read.`, {
    hint: "Open it in Excel and save it again as Excel Workbook (.xlsx), or as CSV UTF-8.",
    cause,
  });
}

/** A `<sheet .../>` element of workbook.xml (any namespace prefix), and one attribute of it. */
const SHEET_ELEMENT = /<(?:[\w.-]+:)?sheet\s([^>]*)>/g;
const ATTRIBUTE = /([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
const ENTITY = /&(?:lt|gt|amp|quot|apos|#(\d+)|#x([0-9a-fA-F]+));/g;
const NAMED: Readonly<Record<string, string>> = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&apos;": "'" };

/**
 * The sheets listed in a workbook.xml, in order. The part is small and machine-written
 * (ECMA-376 §18.2.19: `<sheets><sheet name=".." sheetId=".." state=".." r:id=".."/>`), so
 * its elements are found by pattern rather than with an XML parser; names are unescaped.
 */
export function sheetsOfWorkbookXml(xml: string): WorkbookSheet[] {
  const sheets: WorkbookSheet[] = [];
  for (const element of xml.matchAll(SHEET_ELEMENT)) {
    const attributes = new Map<string, string>();
    for (const [, key, double, single] of element[1]!.matchAll(ATTRIBUTE)) attributes.set(key!, unescapeXml(double ?? single ?? ""));
    const name = attributes.get("name");
    if (name === undefined) continue;
    const state = attributes.get("state");
    sheets.push({ name, visible: state !== "hidden" && state !== "veryHidden" });
  }
  return sheets;
}

function unescapeXml(value: string): string {
  return value.replace(ENTITY, (entity, decimal: string | undefined, hex: string | undefined) => {
    if (decimal !== undefined) return String.fromCodePoint(Number(decimal));
    if (hex !== undefined) return String.fromCodePoint(parseInt(hex, 16));
    return NAMED[entity]!;
  });
}

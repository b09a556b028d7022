import { InputRejectedError, UsageError } from "../errors.js";
import { WorkbookPackage, type Relationship } from "./workbook-package.js";
import type { XmlHandlers } from "./workbook-xml.js";

/** A sheet of a workbook, in tab order. */
export interface WorkbookSheet {
  name: string;
  /** False for a sheet hidden in Excel (`state="hidden"` or `"veryHidden"`). */
  visible: boolean;
  /** What the sheet is (its relationship's type): `worksheet` holds cells; `chartsheet`, `dialogsheet` and macro sheets do not. */
  kind: string;
  /** Its part (`xl/worksheets/sheet1.xml`); undefined when its relationship names none. */
  part: string | undefined;
}

/** An Excel workbook opened for reading: its package, sheets, and the parts its sheets' cells need. */
export interface Workbook {
  package: WorkbookPackage;
  sheets: WorkbookSheet[];
  date1904: boolean;
  sharedStrings: string | undefined;
  styles: string | undefined;
}

/** Where Excel, LibreOffice, openpyxl and Google Sheets all put the workbook part, for a package whose relationships do not say. */
const DEFAULT_WORKBOOK_PART = "xl/workbook.xml";
const BINARY_WORKBOOK_PART = "xl/workbook.bin";

/**
 * Opens a file that is an Excel workbook: a zip whose package relationships name a
 * SpreadsheetML workbook part (or that holds `xl/workbook.xml`), as .xlsx, .xlsm and .xltx
 * files are, whatever the file is called. Undefined for any other file, which the text
 * reader then refuses by its signature. Reads the zip's directory, the workbook part and
 * its relationships; the caller closes `package`.
 * @throws InputRejectedError for a binary workbook (.xlsb) or a workbook part that cannot be read.
 */
export async function openWorkbook(path: string, name: string, signal?: AbortSignal): Promise<Workbook | undefined> {
  const pkg = await WorkbookPackage.open(path, name);
  if (pkg === undefined) return undefined;
  try {
    const main = (await pkg.relationships("", signal)).find((relationship) => relationship.type === "officeDocument")?.target;
    if (pkg.has(BINARY_WORKBOOK_PART) || main?.toLowerCase().endsWith(".bin")) {
      throw new InputRejectedError(`${name} is an Excel binary workbook (.xlsb), which bulkcheck cannot read.`, {
        hint: "Open it in Excel and save it as Excel Workbook (.xlsx) or CSV UTF-8.",
      });
    }
    const part = [main, DEFAULT_WORKBOOK_PART].find((candidate) => candidate !== undefined && pkg.has(candidate));
    const workbook = part === undefined ? undefined : await readWorkbookPart(pkg, part, signal);
    if (workbook === undefined) {
      pkg.close();
      return undefined;
    }
    return workbook;
  } catch (error) {
    pkg.close();
    throw error;
  }
}

/** The workbook part and its relationships; undefined when the part is not a workbook (a Word document's). */
async function readWorkbookPart(pkg: WorkbookPackage, part: string, signal?: AbortSignal): Promise<Workbook | undefined> {
  const xml = new WorkbookXml();
  try {
    await pkg.parse(part, xml, signal);
  } catch (error) {
    if (error instanceof NotAWorkbook) return undefined;
    throw error;
  }
  const relationships = new Map((await pkg.relationships(part, signal)).map((relationship) => [relationship.id, relationship]));
  const target = (type: string) => [...relationships.values()].find((relationship: Relationship) => relationship.type === type)?.target;
  const sheets = xml.sheets.map(({ name, visible, relationship }): WorkbookSheet => {
    const related = relationship === undefined ? undefined : relationships.get(relationship);
    return { name, visible, kind: related?.type ?? "worksheet", part: related?.target };
  });
  return { package: pkg, sheets, date1904: xml.date1904, sharedStrings: target("sharedStrings"), styles: target("styles") };
}

/** A `<sheet>` of workbook.xml, with the id of the relationship that names its part. */
export interface ListedSheet {
  name: string;
  visible: boolean;
  relationship: string | undefined;
}

/**
 * The handlers reading a workbook part (ECMA-376 §18.2.27: `<workbook><workbookPr
 * date1904/><sheets><sheet name sheetId state r:id/>…`). A sheet's `r:id` is the one
 * attribute of `<sheet>` in the relationships namespace, whatever its prefix; the root
 * element tells a workbook from another Office document.
 */
export class WorkbookXml implements XmlHandlers {
  readonly sheets: ListedSheet[] = [];
  date1904 = false;
  /**
   * The elements open, outermost first. Elements count only where the schema puts them: an
   * extension (`<extLst>`, `<mc:AlternateContent>`) may hold its own of the same local
   * name, as Excel's `<x14:workbookPr defaultImageDpi=…/>` after the real `<workbookPr>`.
   */
  readonly #open: string[] = [];

  /** @throws NotAWorkbook at once when the root element is not `workbook`. */
  open(name: string, attributes: Readonly<Record<string, string>>): void {
    const depth = this.#open.push(name);
    if (depth === 1 && name !== "workbook") throw new NotAWorkbook();
    if (depth === 3 && name === "sheet" && this.#open[1] === "sheets" && attributes.name !== undefined) {
      const state = attributes.state;
      const relationship = Object.entries(attributes).find(([key]) => key.endsWith(":id"))?.[1];
      this.sheets.push({ name: attributes.name, visible: state !== "hidden" && state !== "veryHidden", relationship });
    } else if (depth === 2 && name === "workbookPr") {
      this.date1904 = attributes.date1904 === "1" || attributes.date1904 === "true";
    }
  }

  close(): void {
    this.#open.pop();
  }

  text(): void {}
}

/** The main part of another kind of Office document (a .docx's `document`): the zip is no workbook. */
export class NotAWorkbook extends Error {}

/**
 * The sheet `wanted` names (its name, any case) or numbers (from 1, in tab order), else
 * the first visible worksheet (a chart sheet holds no cells).
 * @throws UsageError when there is no such sheet, listing those there are.
 */
export function chooseSheet(name: string, sheets: readonly WorkbookSheet[], wanted: string | undefined): WorkbookSheet {
  if (sheets.length === 0) throw new InputRejectedError(`${name} is an Excel workbook without sheets.`);
  if (wanted === undefined) return sheets.find((sheet) => sheet.visible && sheet.kind === "worksheet") ?? sheets[0]!;
  const lower = wanted.trim().toLowerCase();
  const named = sheets.find((sheet) => sheet.name.toLowerCase() === lower);
  if (named) return named;
  const number = /^\d+$/.test(lower) ? Number(lower) : 0;
  if (number >= 1 && number <= sheets.length) return sheets[number - 1]!;
  throw new UsageError(`${name} has no sheet "${wanted}" (sheets: ${sheetList(sheets)}).`, {
    hint: "Pass --sheet with one of the names listed, or a sheet number from 1.",
  });
}

/** `1 "Contacts", 2 "Old" (hidden), 3 "Chart1" (chart sheet)`. */
export function sheetList(sheets: readonly WorkbookSheet[]): string {
  return sheets
    .map((sheet, i) => {
      const notes = [sheet.visible ? "" : "hidden", sheet.kind === "worksheet" ? "" : kindName(sheet.kind)].filter(Boolean);
      return `${i + 1} "${sheet.name}"${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`;
    })
    .join(", ");
}

/** `a chart sheet`: what a sheet that is no worksheet is, for messages. */
export function kindName(kind: string): string {
  return KIND_NAMES[kind] ?? `${kind} sheet`;
}

const KIND_NAMES: Readonly<Record<string, string>> = {
  chartsheet: "chart sheet",
  dialogsheet: "dialog sheet",
  xlMacrosheet: "macro sheet",
  xlIntlMacrosheet: "macro sheet",
};

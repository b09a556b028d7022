// A CRM export for the Excel input benchmark: one sheet of `rows` rows × 7 columns (id and
// phone typed as numbers, name, email and mobile as distinct strings, a repeating city, a
// created date with a date format) and a second small sheet. Two shapes of the same cells:
// - "shared": as Excel saves it, every string a shared string, the shared strings after
//   the sheet (Excel's order: a reader that streams the zip in order must spool the sheet);
// - "inline": strings written in their cells (inlineStr), as bulkcheck's own writer and
//   many exporters write them, with no shared-strings part.
// Written streaming with yazl, so a million rows take seconds and flat memory. Also writes
// the same cells as CSV, for the reference figures.
//
//   node bench/gen-workbook.js ROWS OUT.xlsx [OUT.csv] [shared|inline]
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import yazl from "yazl";

const HEADER = ["id", "name", "email", "phone", "mobile", "city", "created"];
const CITIES = ["London", "Leeds", "York"];
const FIXED = [...HEADER, ...CITIES];
const EXCEL_EPOCH_2024 = 45292; // 2024-01-01 as an Excel date serial
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/** Row i's values: [id, name, email, phone (a number), mobile, city index, date serial]. */
function values(i) {
  const n = 7_400_000_000 + i;
  const mobile = `+44 ${String(n).slice(0, 4)} ${String(n).slice(4)}`;
  return [i + 1, `Customer ${i}`, `customer${i}@example.com`, 440_000_000_000 + n, mobile, i % 3, EXCEL_EPOCH_2024 + (i % 365)];
}

/** Shared-string index of row i's name, email and mobile (after the header and the cities). */
const stringIndex = (i, k) => FIXED.length + 3 * i + k;

/** A string cell: a shared string's index, or its text inline. */
function stringCell(ref, shared, index, text) {
  return shared ? `<c r="${ref}" t="s"><v>${index}</v></c>` : `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
}

async function* sheetXml(rows, shared) {
  const header = HEADER.map((name, c) => stringCell(`${String.fromCharCode(65 + c)}1`, shared, c, name)).join("");
  yield `${XML}<worksheet xmlns="${MAIN}" xmlns:r="${REL}"><sheetData><row r="1">${header}</row>`;
  let xml = "";
  for (let i = 0; i < rows; i++) {
    const [id, name, email, phone, mobile, city, date] = values(i);
    const r = i + 2;
    xml +=
      `<row r="${r}"><c r="A${r}"><v>${id}</v></c>${stringCell(`B${r}`, shared, stringIndex(i, 0), name)}` +
      `${stringCell(`C${r}`, shared, stringIndex(i, 1), email)}<c r="D${r}"><v>${phone}</v></c>` +
      `${stringCell(`E${r}`, shared, stringIndex(i, 2), mobile)}${stringCell(`F${r}`, shared, HEADER.length + city, CITIES[city])}` +
      `<c r="G${r}" s="1"><v>${date}</v></c></row>`;
    if (xml.length > 1 << 16) {
      yield xml;
      xml = "";
    }
  }
  yield `${xml}</sheetData></worksheet>`;
}

async function* sharedStringsXml(rows) {
  const count = FIXED.length + 3 * rows;
  yield `${XML}<sst xmlns="${MAIN}" count="${count}" uniqueCount="${count}">${FIXED.map((s) => `<si><t>${s}</t></si>`).join("")}`;
  let xml = "";
  for (let i = 0; i < rows; i++) {
    const [, name, email, , mobile] = values(i);
    xml += `<si><t>${name}</t></si><si><t>${email}</t></si><si><t>${mobile}</t></si>`;
    if (xml.length > 1 << 16) {
      yield xml;
      xml = "";
    }
  }
  yield `${xml}</sst>`;
}

const FIXED_PARTS = {
  "[Content_Types].xml":
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
    '<Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
    '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
  "_rels/.rels": `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  "xl/workbook.xml": `${XML}<workbook xmlns="${MAIN}" xmlns:r="${REL}"><sheets><sheet name="Contacts" sheetId="1" r:id="rId1"/><sheet name="Notes" sheetId="2" r:id="rId2"/></sheets></workbook>`,
  "xl/_rels/workbook.xml.rels":
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
    `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${REL}/worksheet" Target="worksheets/sheet2.xml"/>` +
    `<Relationship Id="rId3" Type="${REL}/styles" Target="styles.xml"/><Relationship Id="rId4" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
};
/** The content type and relationship of the shared-strings part, left out of an "inline" workbook. */
const SHARED_STRINGS_MENTION = /<(?:Override|Relationship) [^>]*sharedStrings[^>]*\/>/g;
const NOTES = `${XML}<worksheet xmlns="${MAIN}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>not a list</t></is></c></row></sheetData></worksheet>`;
const STYLES =
  `${XML}<styleSheet xmlns="${MAIN}"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts>` +
  '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="1"><fill><patternFill patternType="none"/></fill></fills>' +
  '<borders count="1"><border/></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs></styleSheet>';

/**
 * Writes the workbook in `shape` "shared" or "inline" (and, with csvPath, the same cells as
 * CSV, dates as ISO text).
 */
export async function writeWorkbook(rows, path, csvPath, shape = "shared") {
  const shared = shape === "shared";
  const zip = new yazl.ZipFile();
  for (const [name, xml] of Object.entries(FIXED_PARTS)) {
    zip.addBuffer(Buffer.from(shared ? xml : xml.replace(SHARED_STRINGS_MENTION, "")), name);
  }
  zip.addReadStream(Readable.from(sheetXml(rows, shared)), "xl/worksheets/sheet1.xml");
  zip.addBuffer(Buffer.from(NOTES), "xl/worksheets/sheet2.xml");
  zip.addBuffer(Buffer.from(STYLES), "xl/styles.xml");
  if (shared) zip.addReadStream(Readable.from(sharedStringsXml(rows)), "xl/sharedStrings.xml");
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(path));
  if (csvPath) await pipeline(Readable.from(csvLines(rows)), createWriteStream(csvPath));
}

async function* csvLines(rows) {
  yield `${HEADER.join(",")}\n`;
  let text = "";
  for (let i = 0; i < rows; i++) {
    const [id, name, email, phone, mobile, city, date] = values(i);
    const iso = new Date(Date.UTC(1899, 11, 30) + date * 86_400_000).toISOString().slice(0, 10);
    text += `${id},${name},${email},${phone},${mobile},${CITIES[city]},${iso}\n`;
    if (text.length > 1 << 16) {
      yield text;
      text = "";
    }
  }
  yield text;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [rows, path, csvPath, shape] = process.argv.slice(2);
  await writeWorkbook(Number(rows), path, csvPath || undefined, shape);
}

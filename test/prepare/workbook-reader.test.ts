import { describe, expect, it } from "vitest";
import { InputRejectedError } from "../../src/errors.js";
import { openRows, type RowSource } from "../../src/prepare/index.js";
import { resolveTarget } from "../../src/prepare/workbook-package.js";
import { isDateFormat } from "../../src/prepare/workbook-styles.js";
import { deflatedRepeat, MAIN_NS, noise, REL_TYPE, workbookParts, zipWithDeflated, type WorkbookSpec } from "../helpers/workbook-parts.js";
import { zipOf } from "../helpers/results-fixtures.js";
import { listFile, recordsOf } from "./helpers.js";

/** A workbook of `parts` (name → XML) in a temp file. */
async function partsFile(parts: Record<string, string>): Promise<string> {
  return listFile("book.xlsx", await zipOf(parts));
}

async function bookFile(spec: WorkbookSpec): Promise<string> {
  return partsFile(workbookParts(spec));
}

/** Every row the first visible sheet holds (header included), as [line, fields]. */
async function rowsOf(path: string): Promise<Array<[number, string[]]>> {
  const rows = await openRows(path, { hasHeader: false });
  const out: Array<[number, string[]]> = [];
  for await (const record of recordsOf(rows)) out.push([record.line, record.fields]);
  return out;
}

/** One row's cells, read from a sheet holding only that row. */
async function cellsOf(row: string, spec: Omit<WorkbookSpec, "sheets"> = {}): Promise<string[]> {
  const rows = await rowsOf(await bookFile({ ...spec, sheets: [{ name: "Sheet1", rows: `<row r="1">${row}</row>` }] }));
  return rows[0]![1];
}

async function refusal(path: string, read: (rows: RowSource) => Promise<unknown> = (rows) => drain(rows)): Promise<InputRejectedError> {
  const error = await openRows(path)
    .then(read)
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  expect(error).toBeInstanceOf(InputRejectedError);
  return error as InputRejectedError;
}

async function drain(rows: RowSource): Promise<void> {
  for await (const _ of rows.batches()) {
    // read to the end
  }
}

const STYLES =
  '<numFmts count="3"><numFmt numFmtId="164" formatCode="00000000000"/><numFmt numFmtId="165" formatCode="dd/mm/yyyy\\ hh:mm"/>' +
  '<numFmt numFmtId="166" formatCode="[Red]0"/></numFmts>' +
  '<cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs>' +
  '<cellXfs count="5"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="14"/><xf numFmtId="165"/><xf numFmtId="166"/></cellXfs>' +
  '<dxfs count="1"><dxf><numFmt numFmtId="164" formatCode="yyyy"/></dxf></dxfs>';

describe("a workbook's cells", () => {
  it("reads every type of cell as Excel shows it", async () => {
    const row =
      '<c r="A1" t="s"><v>0</v></c>' + // shared string
      '<c r="B1" t="inlineStr"><is><t>+44 7400 100001</t></is></c>' +
      '<c r="C1"><v>447400123456</v></c>' + // number, General
      '<c r="D1" t="n" s="1"><v>7400123456</v></c>' + // padded by its format
      '<c r="E1" s="2"><v>45322</v></c>' + // built-in date format 14
      '<c r="F1" s="3"><v>45323.39589120371</v></c>' + // custom date and time
      '<c r="G1" s="4"><v>42</v></c>' + // [Red]0 is no date
      '<c r="H1" t="b"><v>1</v></c><c r="I1" t="b"><v>0</v></c>' +
      '<c r="J1" t="e"><v>#N/A</v></c>' +
      '<c r="K1" t="d"><v>2024-01-31T00:00:00Z</v></c>' +
      '<c r="L1"><v>4474001234567891</v></c>'; // rounded by Excel
    expect(await cellsOf(row, { sharedStrings: ["07400 100002"], styles: STYLES })).toEqual([
      "07400 100002",
      "+44 7400 100001",
      "447400123456",
      "07400123456",
      "2024-01-31",
      "2024-02-01 09:30:05",
      "42",
      "TRUE",
      "FALSE",
      "#N/A",
      "2024-01-31",
      "4.47400123456789E+15",
    ]);
  });

  it("reads a formula as its cached value, never the formula, typed as its cell says", async () => {
    const row =
      '<c r="A1"><f>A2*1</f><v>447400123456</v></c>' + // a formula's cached number
      '<c r="B1" t="str"><f>CONCAT("+44 ","7400 123456")</f><v>+44 7400 123456</v></c>' + // its cached text
      '<c r="C1"><f>A2</f></c>' + // with no cached result
      '<c r="D1" t="e"><f>1/0</f><v>#DIV/0!</v></c>' + // whose result is an error (shown as Excel shows it)
      '<c r="E1"><f>B2+1</f><v></v></c>' + // openpyxl's formula: an empty cached value
      '<c r="F1" t="b"><f aca="false">TRUE()</f><v>1</v></c>'; // LibreOffice's
    expect(await cellsOf(row)).toEqual(["447400123456", "+44 7400 123456", "", "#DIV/0!", "", "TRUE"]);
  });

  it("joins rich text's runs, leaves phonetic guides out, and decodes entities and Excel's escapes", async () => {
    const row =
      '<c r="A1" t="inlineStr"><is><r><t>+44 7400 </t></r><r><rPr><b/></rPr><t>123456</t></r></is></c>' +
      '<c r="B1" t="inlineStr"><is><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></is></c>' +
      '<c r="C1" t="inlineStr"><is><t>a &amp; b&#10;line_x000D_end</t></is></c>' +
      '<c r="D1" t="s"><v>0</v></c>';
    const rich = "<si><r><t>+44 </t></r><r><t>7400 100004</t></r></si>";
    expect(await cellsOf(row, { sharedStrings: rich })).toEqual(["+44 7400 123456", "東京", "a & b\nline\rend", "+44 7400 100004"]);
  });

  it("reads a hyperlink's cell as its text, and nothing outside sheetData as cells", async () => {
    const parts = workbookParts({ sheets: [{ name: "Sheet1", rows: "" }], sharedStrings: ["+44 7400 123456"] });
    parts["xl/worksheets/sheet1.xml"] =
      `<worksheet xmlns="${MAIN_NS}" xmlns:r="${REL_TYPE}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData>` +
      '<hyperlinks><hyperlink ref="A1" r:id="rId1"/></hyperlinks><headerFooter><oddHeader>&amp;CPage</oddHeader></headerFooter>' +
      `<extLst><ext uri="{x}"><row r="9"><c r="A9"><v>1</v></c></row></ext></extLst></worksheet>`;
    expect(await rowsOf(await partsFile(parts))).toEqual([[1, ["+44 7400 123456"]]]);
  });

  it("places cells and rows without an r after the ones before, and reads any namespace prefix", async () => {
    const parts = workbookParts({ sheets: [{ name: "Sheet1", rows: "" }] });
    parts["xl/worksheets/sheet1.xml"] =
      `<x:worksheet xmlns:x="${MAIN_NS}"><x:sheetData>` +
      '<x:row><x:c t="inlineStr"><x:is><x:t>a</x:t></x:is></x:c><x:c><x:v>1</x:v></x:c></x:row>' +
      '<x:row r="3"><x:c r="C3"><x:v>2</x:v></x:c><x:c><x:v>3</x:v></x:c></x:row><x:row><x:c><x:v>4</x:v></x:c></x:row>' +
      "</x:sheetData></x:worksheet>";
    expect(await rowsOf(await partsFile(parts))).toEqual([
      [1, ["a", "1"]],
      [2, []],
      [3, ["", "", "2", "3"]],
      [4, ["4"]],
    ]);
  });

  it("reads dates in the 1904 date system when the workbook says so, whatever an extension of the same name says", async () => {
    const workbookPr =
      '<workbookPr date1904="1"/><extLst><ext uri="{x}"><x14:workbookPr xmlns:x14="x14" defaultImageDpi="32767"/></ext></extLst>';
    expect(await cellsOf('<c r="A1" s="2"><v>43860</v></c>', { styles: STYLES, workbookPr })).toEqual(["2024-01-31"]);
  });

  it.each<[string, boolean]>([
    ["yyyy-mm-dd", true],
    ["[h]:mm:ss", true],
    ['d "days"', true],
    ["[$-409]mmmm d, yyyy", true],
    ["General", false],
    ["00000000000", false],
    ["[Red]0;[Blue]-0", false],
    ['0 "days"', false],
    ["#,##0.00_);(#,##0.00)", false],
    ["@", false],
  ])("tells a date format: %s → %s", (code, date) => {
    expect(isDateFormat(code)).toBe(date);
  });
});

describe("a workbook's parts", () => {
  it.each<[string, string, string, string | undefined]>([
    ["relative, as Excel writes", "xl/workbook.xml", "worksheets/sheet1.xml", "xl/worksheets/sheet1.xml"],
    ["absolute, as openpyxl writes", "xl/workbook.xml", "/xl/worksheets/sheet1.xml", "xl/worksheets/sheet1.xml"],
    ["from the package's root", "", "xl/workbook.xml", "xl/workbook.xml"],
    ["with dot segments", "xl/workbook.xml", "./worksheets/../worksheets/sheet1.xml", "xl/worksheets/sheet1.xml"],
    ["percent-encoded", "xl/workbook.xml", "worksheets/my%20sheet.xml", "xl/worksheets/my sheet.xml"],
    ["with backslashes", "xl/workbook.xml", "worksheets\\sheet1.xml", "xl/worksheets/sheet1.xml"],
    ["another host", "xl/workbook.xml", "https://example.com/sheet1.xml", undefined],
    ["with a malformed escape, naming no part", "xl/workbook.xml", "sheet%zz.xml", undefined],
  ])("resolves a relationship target %s", (_what, source, target, part) => {
    expect(resolveTarget(source, target)).toBe(part);
  });

  it("reads a workbook with absolute targets (openpyxl, pandas), parts in any zip order and names in any case", async () => {
    const spec: WorkbookSpec = {
      sheets: [{ name: "Contacts", rows: '<row r="1"><c r="A1" t="s"><v>0</v></c></row>' }],
      sharedStrings: ["+44 7400 100001"],
      styles: STYLES,
      targets: "absolute",
    };
    const parts = Object.entries(workbookParts(spec)).reverse();
    const shuffled = Object.fromEntries(parts.map(([name, xml]) => [name === "xl/styles.xml" ? "XL/Styles.XML" : name, xml]));
    expect(await rowsOf(await partsFile(shuffled))).toEqual([[1, ["+44 7400 100001"]]]);
  });

  it("reads a workbook laid out as Google Sheets writes it: sheet parts numbered apart from the tabs, the workbook part last", async () => {
    const cell = (text: string) => `<row r="1"><c r="A1" t="s"><v>${text}</v></c></row>`;
    const parts = workbookParts({
      sheets: [
        { name: "Africa", rows: cell("0") },
        { name: "Americas", rows: cell("1") },
      ],
      sharedStrings: ["Algeria", "Argentina"],
    });
    const [africa, americas] = [parts["xl/worksheets/sheet1.xml"]!, parts["xl/worksheets/sheet2.xml"]!];
    const rels = parts["xl/_rels/workbook.xml.rels"]!.replace("worksheets/sheet1.xml", "worksheets/sheetA.xml").replace(
      "worksheets/sheet2.xml",
      "worksheets/sheet1.xml",
    );
    const google = {
      "xl/worksheets/sheet1.xml": americas,
      "xl/worksheets/sheetA.xml": africa,
      "xl/sharedStrings.xml": parts["xl/sharedStrings.xml"]!,
      "xl/workbook.xml": parts["xl/workbook.xml"]!.replace('<sheet name="Africa"', '<sheet state="visible" name="Africa"'),
      "xl/_rels/workbook.xml.rels": rels.replace(/rIdStrings/g, "rId0"),
      "_rels/.rels": parts["_rels/.rels"]!,
      "[Content_Types].xml": parts["[Content_Types].xml"]!,
    };
    const path = await partsFile(google);
    expect(await rowsOf(path)).toEqual([[1, ["Algeria"]]]);
    const second = await openRows(path, { sheet: "2", hasHeader: false });
    expect((await recordsOf(second).next()).value).toMatchObject({ fields: ["Argentina"] });
    await second.close();
  });

  it("reads a Strict Open XML workbook (ISO/IEC 29500 Strict namespaces and relationship types)", async () => {
    const parts = workbookParts({
      sheets: [{ name: "S", rows: '<row r="1"><c r="A1" t="d"><v>2024-01-31</v></c><c r="B1" t="s"><v>0</v></c></row>' }],
      sharedStrings: ["+44 7400 100001"],
    });
    const strict = Object.fromEntries(
      Object.entries(parts).map(([name, xml]) => [
        name,
        xml
          .replaceAll(MAIN_NS, "http://purl.oclc.org/ooxml/spreadsheetml/main")
          .replaceAll(REL_TYPE, "http://purl.oclc.org/ooxml/officeDocument/relationships"),
      ]),
    );
    expect(await rowsOf(await partsFile(strict))).toEqual([[1, ["2024-01-31", "+44 7400 100001"]]]);
  });

  it("reads relationships under any namespace prefix, and parts stored without compression", async () => {
    const parts: Record<string, string | { stored: string }> = workbookParts({
      sheets: [{ name: "S", rows: '<row r="1"><c r="A1" t="s"><v>0</v></c></row>' }],
      sharedStrings: ["+44 7400 100001"],
    });
    parts["xl/_rels/workbook.xml.rels"] = (parts["xl/_rels/workbook.xml.rels"] as string)
      .replace(/<(\/?)Relationship/g, "<$1ns0:Relationship")
      .replace("xmlns=", "xmlns:ns0=");
    parts["xl/sharedStrings.xml"] = { stored: parts["xl/sharedStrings.xml"] as string };
    expect(await rowsOf(await listFile("book.xlsx", zipWithDeflated(parts)))).toEqual([[1, ["+44 7400 100001"]]]);
  });

  it("reads parts in UTF-8 with or without a byte-order mark and in UTF-16, bytes of no character as U+FFFD", async () => {
    const parts: Record<string, string | { stored: string | Buffer }> = workbookParts({
      sheets: [{ name: "S", rows: '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>caf\u00e9 ☎</t></is></c></row>' }],
      sharedStrings: ["Zoë ☎"],
    });
    const sheet = parts["xl/worksheets/sheet1.xml"] as string;
    const strings = parts["xl/sharedStrings.xml"] as string;
    const utf16 = (bom: number[], text: string, swap: boolean) => {
      const bytes = Buffer.from(text, "utf16le");
      if (swap) bytes.swap16();
      return Buffer.concat([Buffer.from(bom), bytes]);
    };
    const read = async (sheetBytes: Buffer, stringBytes: Buffer) =>
      rowsOf(
        await listFile(
          "book.xlsx",
          zipWithDeflated({
            ...parts,
            "xl/worksheets/sheet1.xml": { stored: sheetBytes },
            "xl/sharedStrings.xml": { stored: stringBytes },
          }),
        ),
      );
    const expected = [[1, ["Zoë ☎", "café ☎"]]];
    expect(await read(Buffer.from(`\ufeff${sheet}`), Buffer.from(strings))).toEqual(expected);
    expect(await read(utf16([0xff, 0xfe], sheet, false), utf16([0xfe, 0xff], strings, true))).toEqual(expected);
    const [before, after] = sheet.split("\u00e9") as [string, string];
    const latin1 = Buffer.concat([Buffer.from(before), Buffer.from([0xe9]), Buffer.from(after)]); // é as Windows-1252 writes it
    expect((await read(latin1, Buffer.from(strings)))[0]![1][1]).toBe("caf\ufffd ☎");
  });

  it("reads the first visible worksheet by default, and says a chart sheet holds no cells", async () => {
    const parts = workbookParts({
      sheets: [
        { name: "Chart1", rows: "" },
        { name: "Contacts", rows: '<row r="1"><c t="inlineStr"><is><t>phone</t></is></c></row>' },
      ],
    });
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"]!.replace(
      `${REL_TYPE}/worksheet" Target="worksheets/sheet1.xml`,
      `${REL_TYPE}/chartsheet" Target="chartsheets/sheet1.xml`,
    );
    const path = await partsFile(parts);
    expect((await openRows(path)).format.sheet).toBe("Contacts");
    const chart = openRows(path, { sheet: "Chart1" });
    await expect(chart).rejects.toThrow('Sheet "Chart1" of');
    await expect(chart).rejects.toThrow("is a chart sheet, which holds no cells.");
  });

  it("says which part is missing or broken, and what is wrong with it", async () => {
    const spec: WorkbookSpec = {
      sheets: [{ name: "Contacts", rows: '<row r="1"><c r="A1" t="s"><v>3</v></c></row>' }],
      sharedStrings: ["a"],
    };
    const missingSheet = workbookParts(spec);
    delete missingSheet["xl/worksheets/sheet1.xml"];
    expect((await refusal(await partsFile(missingSheet))).message).toMatch(
      /cannot be read as an Excel workbook: xl\/worksheets\/sheet1\.xml is missing\.$/,
    );
    expect((await refusal(await bookFile(spec))).message).toContain(
      'sheet "Contacts" (xl/worksheets/sheet1.xml) has a cell, A1, that refers to shared string 3, but the workbook holds 1.',
    );
    const broken = workbookParts(spec);
    broken["xl/sharedStrings.xml"] = "<sst><si><t>a</si></sst>";
    expect((await refusal(await partsFile(broken))).message).toMatch(/xl\/sharedStrings\.xml is not well-formed XML \(.*\)\.$/);
    const unordered = await bookFile({ sheets: [{ name: "Contacts", rows: '<row r="5"/><row r="3"/>' }] });
    expect((await refusal(unordered)).message).toContain("has row 3 after row 5: its rows are out of order.");
    const farRow = await bookFile({ sheets: [{ name: "Contacts", rows: '<row r="2000000000"/>' }] });
    expect((await refusal(farRow)).message).toContain(`has a row numbered "2000000000", outside Excel's rows 1 to 1,048,576.`);
    const farColumn = await bookFile({ sheets: [{ name: "Contacts", rows: '<row r="1"><c r="ZZZZ1"><v>1</v></c></row>' }] });
    expect((await refusal(farColumn)).message).toContain(`has a cell "ZZZZ1" in row 1 outside Excel's columns A to XFD.`);
    expect((await refusal(farColumn)).message).not.toMatch(/chart sheet/);
  });

  it("refuses a DOCTYPE, so no entity expands (billion laughs) and no external entity is fetched (XXE)", async () => {
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>' +
      `<sst xmlns="${MAIN_NS}"><si><t>&lol2;</t></si></sst>`;
    const xxe = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><sst xmlns="${MAIN_NS}"><si><t>&xxe;</t></si></sst>`;
    for (const xml of [laughs, xxe]) {
      const parts = workbookParts({ sharedStrings: [] });
      parts["xl/sharedStrings.xml"] = xml;
      expect((await refusal(await partsFile(parts))).message).toContain("xl/sharedStrings.xml declares a DOCTYPE");
    }
  });

  it("refuses a cell or shared string past Excel's 32,767 characters, a row past 1 MiB, text past 1 MiB without markup, and deep nesting", async () => {
    const long = "x".repeat(32_768);
    const cell = await bookFile({ sheets: [{ name: "S", rows: `<row r="7"><c r="B7" t="inlineStr"><is><t>${long}</t></is></c></row>` }] });
    expect((await refusal(cell)).message).toContain("has a cell, B7, of more than 32,767 characters, Excel's limit for a cell.");
    const shared = await bookFile({ sheets: [{ name: "S", rows: "" }], sharedStrings: ["a", long] });
    expect((await refusal(shared)).message).toContain("xl/sharedStrings.xml holds a string (number 2) of more than 32,767 characters");
    // Text that does not compress, so that no ratio limit stops these first.
    const cells = Array.from({ length: 40 }, (_, i) => `<c t="inlineStr"><is><t>${noise(30_000, i)}</t></is></c>`).join("");
    const row = await bookFile({ sheets: [{ name: "S", rows: `<row r="1">${cells}</row>` }] });
    expect((await refusal(row)).message).toContain("has a row, 1, with more than 1 MiB of text.");
    // Inside a formula, which no limit on cells reads.
    const endless = await bookFile({ sheets: [{ name: "S", rows: `<row r="1"><c r="A1"><f>${noise(2_000_000)}</f></c></row>` }] });
    expect((await refusal(endless)).message).toContain("xl/worksheets/sheet1.xml holds more than 1 MiB of XML without markup.");
    const deep = await bookFile({
      sheets: [{ name: "S", rows: `<row r="1"><c r="A1">${"<a>".repeat(200)}${"</a>".repeat(200)}</c></row>` }],
    });
    expect((await refusal(deep)).message).toContain("xl/worksheets/sheet1.xml nests elements more than 100 deep.");
  });

  it("refuses a decompression bomb before inflating it: 1 GB of sheet XML, and one shared string of 300 MB", async () => {
    const sheet = workbookParts({ sheets: [{ name: "S", rows: "" }] });
    const rows = deflatedRepeat(`<worksheet xmlns="${MAIN_NS}"><sheetData>`, "<row/>".repeat(1 << 20), 160, "</sheetData></worksheet>");
    const bomb = await listFile("bomb.xlsx", zipWithDeflated({ ...sheet, "xl/worksheets/sheet1.xml": rows }));
    expect((await refusal(bomb)).message).toMatch(
      /bomb\.xlsx cannot be read as an Excel workbook: its part xl\/worksheets\/sheet1\.xml expands \d+-fold, over the 200-fold limit; it looks like a zip bomb\.$/,
    );
    const strings = workbookParts({ sheets: [{ name: "S", rows: "" }], sharedStrings: [] });
    const string = deflatedRepeat(`<sst xmlns="${MAIN_NS}"><si><t>`, "A".repeat(1 << 20), 300, "</t></si></sst>");
    const stringBomb = await listFile("string.xlsx", zipWithDeflated({ ...strings, "xl/sharedStrings.xml": string }));
    expect((await refusal(stringBomb)).message).toMatch(/its part xl\/sharedStrings\.xml expands \d+-fold, over the 200-fold limit/);
  });

  it("refuses a part that inflates past the size its zip entry declares", async () => {
    const parts = workbookParts({ sheets: [{ name: "S", rows: "" }] });
    const real = deflatedRepeat(`<worksheet xmlns="${MAIN_NS}"><sheetData>`, '<row r="1"/>', 1, "</sheetData></worksheet>");
    const path = await listFile("liar.xlsx", zipWithDeflated({ ...parts, "xl/worksheets/sheet1.xml": { data: real.data, size: 20 } }));
    expect((await refusal(path)).message).toContain("xl/worksheets/sheet1.xml inflates past the 20 bytes its zip entry declares.");
  });
});

describe("reading a workbook with an AbortSignal", () => {
  const many = Array.from(
    { length: 20_000 },
    (_, i) => `<row r="${i + 1}"><c t="inlineStr"><is><t>+44 7400 ${100_000 + i}</t></is></c></row>`,
  ).join("");

  it("stops with the signal's reason when it aborts while rows are read", async () => {
    const path = await bookFile({ sheets: [{ name: "S", rows: many }] });
    const controller = new AbortController();
    const rows = await openRows(path, { hasHeader: false }, controller.signal);
    const batches = rows.batches();
    expect((await batches.next()).done).toBe(false);
    controller.abort(new Error("timed out"));
    await expect(batches.next()).rejects.toThrow("timed out");
  });

  it("does not start reading when the signal has already aborted", async () => {
    const path = await bookFile({ sheets: [{ name: "S", rows: many }], sharedStrings: ["a"] });
    await expect(openRows(path, undefined, AbortSignal.abort(new Error("cancelled")))).rejects.toThrow("cancelled");
  });
});

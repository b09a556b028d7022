import { readFile } from "node:fs/promises";
import { join } from "node:path";
import yazl from "yazl";
import { describe, expect, it } from "vitest";
import { InputRejectedError, UsageError } from "../../src/errors.js";
import { createRowClassifier, openRows } from "../../src/prepare/index.js";
import { WorkbookXml } from "../../src/prepare/workbook-sheets.js";
import { readPartXml } from "../helpers/workbook-parts.js";
import { writeWorkbook, type SheetSpec } from "../helpers/xlsx.js";
import { listFile, prepare, recordsOf, tempDir } from "./helpers.js";

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A CRM export: a number-typed phone column, a text one, a date, blank rows, and a second sheet. */
const CRM: SheetSpec[] = [
  {
    name: "Contacts",
    rows: [
      ["name", "phone", "mobile", "since"],
      ["Amy", 447400100001, "+44 7400 100001", new Date(Date.UTC(2024, 0, 31))],
      ["Bob", { value: 7400100002, numFmt: "00000000000" }, "07400 100002", null],
      undefined,
      ["Cy", 4474001000031234, "=1+1", null],
      [null, null, null, null],
      ["Di", { formula: "B2+1", result: 447400100002 }, { richText: [{ text: "+44 " }, { text: "7400 100004" }] }, null],
    ],
  },
  { name: "Notes", rows: [["a note"]] },
];

async function crmFile(sheets: SheetSpec[] = CRM): Promise<string> {
  return writeWorkbook(join(await tempDir(), "crm.xlsx"), sheets);
}

describe("openRows on an Excel workbook", () => {
  it("reads the first sheet's cells as Excel shows them, rows numbered as in Excel, skipped rows blank", async () => {
    const rows = await openRows(await crmFile());
    expect(rows.format).toEqual({ kind: "xlsx", hasHeader: true, encoding: "utf8", sheet: "Contacts" });
    expect(rows.header?.fields).toEqual(["name", "phone", "mobile", "since"]);
    const records = await all(recordsOf(rows));
    expect(records.map((r) => [r.line, r.fields])).toEqual([
      [2, ["Amy", "447400100001", "+44 7400 100001", "2024-01-31"]],
      [3, ["Bob", "07400100002", "07400 100002"]],
      [4, []],
      [5, ["Cy", "4.47400100003123E+15", "=1+1"]],
      [6, []],
      [7, ["Di", "447400100002", "+44 7400 100004"]],
    ]);
    // A row's raw text is its fields as a CSV line (what a join into CSV writes).
    expect(records[0]!.raw).toBe("Amy,447400100001,+44 7400 100001,2024-01-31");
  });

  it("is recognised by its content, whatever the file is called", async () => {
    const path = await crmFile();
    const renamed = await listFile("export.csv", await readFile(path));
    expect((await openRows(renamed)).format.kind).toBe("xlsx");
  });

  it("reads the sheet --sheet names (any case) or numbers, and the first visible sheet by default", async () => {
    const sheets: SheetSpec[] = [{ name: "Hidden", rows: [["phone"], ["+44 7400 100009"]], hidden: true }, ...CRM];
    const path = await crmFile(sheets);
    expect((await openRows(path)).format.sheet).toBe("Contacts");
    expect((await openRows(path, { sheet: "notes" })).format.sheet).toBe("Notes");
    expect((await openRows(path, { sheet: "1" })).format.sheet).toBe("Hidden");
    const missing = openRows(path, { sheet: "Leads" });
    await expect(missing).rejects.toBeInstanceOf(UsageError);
    await expect(missing).rejects.toThrow('has no sheet "Leads" (sheets: 1 "Hidden" (hidden), 2 "Contacts", 3 "Notes")');
  });

  it("refuses --sheet for a text list", async () => {
    const path = await listFile("list.csv", "phone\n07400 100001\n");
    await expect(openRows(path, { sheet: "1" })).rejects.toThrow('list.csv is not an Excel workbook, so it has no sheet "1"');
  });

  it("yields the same rows as cells of one column, for classification", async () => {
    const rows = await openRows(await crmFile());
    const pieces = await all(rows.pieces(1));
    expect(pieces).toEqual([
      { lines: [2, 3, 4, 5, 6, 7], cells: ["447400100001", "07400100002", "", "4.47400100003123E+15", "", "447400100002"] },
    ]);
  });

  it("reads past its sample in batches, with the same rows as one reading", async () => {
    const many = Array.from({ length: 3000 }, (_, i) => (i % 7 === 4 ? undefined : [`c${i}`, `+44 7400 ${100_000 + i}`]));
    const path = await crmFile([{ name: "Big", rows: [["name", "phone"], ...many] }]);
    const records = await all(recordsOf(await openRows(path)));
    const cells = (await all((await openRows(path)).pieces(1))).flatMap((piece) => ("cells" in piece ? piece.cells : []));
    expect(records).toHaveLength(3000);
    expect(records.map((r) => r.line)).toEqual(Array.from({ length: 3000 }, (_, i) => i + 2));
    expect(records.map((r) => r.fields[1] ?? "")).toEqual(cells);
    expect(cells.filter((cell) => cell === "")).toHaveLength(many.filter((row) => row === undefined).length);
  });

  it("refuses a binary workbook (.xlsb) and reads a zip that is no workbook as the text reader refuses it", async () => {
    const xlsb = await zipFile({ "[Content_Types].xml": "<Types/>", "xl/workbook.bin": "binary" });
    await expect(openRows(xlsb)).rejects.toThrow(/Excel binary workbook \(\.xlsb\)/);
    const zip = await zipFile({ "notes.txt": "hello" });
    const run = openRows(zip);
    await expect(run).rejects.toBeInstanceOf(InputRejectedError);
    await expect(run).rejects.toThrow("is a ZIP archive, not a text list.");
  });
});

describe("prepareList on an Excel workbook", () => {
  it("classifies a sheet exactly as the same cells in a CSV, and journals the sheet", async () => {
    const xlsx = await crmFile();
    const csv = await listFile(
      "crm.csv",
      "name,phone,mobile,since\nAmy,447400100001,+44 7400 100001,2024-01-31\nBob,07400100002,07400 100002\n\n" +
        "Cy,4.47400100003123E+15,=1+1\n\nDi,447400100002,+44 7400 100004\n",
    );
    for (const column of ["phone", "mobile"]) {
      const rejects = [join(await tempDir(), "a.csv"), join(await tempDir(), "b.csv")];
      const fromXlsx = await prepare(xlsx, { column, rejectsPath: rejects[0], workers: 0 });
      const fromCsv = await prepare(csv, { column, rejectsPath: rejects[1] });
      expect(fromXlsx.kept).toEqual(fromCsv.kept);
      expect({ ...fromXlsx.summary, encoding: "-" }).toEqual({ ...fromCsv.summary, encoding: "-" });
      expect(await readFile(rejects[0]!, "utf8")).toBe(await readFile(rejects[1]!, "utf8"));
      expect(fromXlsx.settings.sheet).toBe("Contacts");
    }
    const phone = await prepare(xlsx, { column: "phone" });
    // The 16-digit number Excel rounded is invalid with the CSV rule's reason; the padded one is read as shown.
    expect(phone.kept).toEqual(["447400100001", "447400100002"]);
    expect(phone.summary).toMatchObject({ rows_read: 6, invalid_cnt: 1, duplicate_cnt: 1, blank: 2 });
  });

  it("recomputes, from its settings, exactly the classes preparation gave each row (the join's reading)", async () => {
    const path = await crmFile();
    const prepared = await prepare(path, { sheet: "Contacts", column: "mobile" });
    const settings = JSON.parse(JSON.stringify(prepared.settings)) as typeof prepared.settings;
    const rows = await openRows(path, settings);
    const classifier = createRowClassifier(settings);
    const kept: string[] = [];
    for await (const record of recordsOf(rows)) {
      const row = classifier.classify(record.fields[settings.column.index] ?? "", record.line);
      if (row.class === "kept") kept.push(row.identifier!);
    }
    expect(kept).toEqual(prepared.kept);
  });

  it("reads a sheet's shared strings when they are the zip's last entry", async () => {
    const main = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
    const rels = 'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"';
    const type = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    const path = await zipFile({
      "[Content_Types].xml":
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>',
      "_rels/.rels": `<Relationships ${rels}><Relationship Id="rId1" Type="${type}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
      "xl/workbook.xml": `<workbook ${main} xmlns:r="${type}"><sheets><sheet name="Contacts" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      "xl/_rels/workbook.xml.rels":
        `<Relationships ${rels}><Relationship Id="rId1" Type="${type}/worksheet" Target="worksheets/sheet1.xml"/>` +
        `<Relationship Id="rId2" Type="${type}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
      "xl/worksheets/sheet1.xml":
        `<worksheet ${main}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row>` +
        '<row r="2"><c r="A2" t="s"><v>1</v></c></row><row r="3"><c r="A3" t="s"><v>2</v></c></row></sheetData></worksheet>',
      "xl/sharedStrings.xml": `<sst ${main}><si><t>mobile</t></si><si><t>+44 7400 100001</t></si><si><t>+44 7400 100002</t></si></sst>`,
    });
    // exceljs 4.4 missed this last entry at times (its issues #683, #3064); the shared strings are read first, wherever they are.
    expect((await prepare(path, { column: "mobile" })).kept).toEqual(["447400100001", "447400100002"]);
  });

  it("reads a workbook from a stream (stdin)", async () => {
    const bytes = await readFile(await crmFile());
    const { Readable } = await import("node:stream");
    const prepared = await prepare({ stream: Readable.from([bytes]), name: "stdin" }, { column: "mobile" });
    expect(prepared.kept).toEqual(["447400100001", "447400100002", "447400100004"]);
    expect(prepared.format.sheet).toBe("Contacts");
  });
});

/** The sheets a workbook part lists, as openWorkbook reads them. */
function sheetsOfWorkbookXml(xml: string): Array<{ name: string; visible: boolean }> {
  return readPartXml(xml, new WorkbookXml()).sheets.map(({ name, visible }) => ({ name, visible }));
}

describe("the workbook part", () => {
  it("lists sheets in tab order, with any namespace prefix, escaped names and hidden states", () => {
    const xml =
      '<?xml version="1.0"?><x:workbook xmlns:x="main"><x:sheets>' +
      '<x:sheet name="Q&amp;A &lt;2024&gt;" sheetId="3" r:id="rId1"/>' +
      "<x:sheet sheetId='1' state='hidden' name='Old &#233;t&#xE9;' r:id='rId2'/>" +
      '<x:sheet name="Gone" sheetId="2" state="veryHidden" r:id="rId3"></x:sheet>' +
      "</x:sheets></x:workbook>";
    expect(sheetsOfWorkbookXml(xml)).toEqual([
      { name: "Q&A <2024>", visible: true },
      { name: "Old été", visible: false },
      { name: "Gone", visible: false },
    ]);
  });
});

async function zipFile(entries: Record<string, string>): Promise<string> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(entries)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return listFile("archive.xlsx", Buffer.concat(chunks));
}

import { copyFileSync, mkdtempSync, readdirSync, readFileSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { allowSmallTasks, checkedAtByTask, expectedResult, parseDelimited } from "../helpers/results-fixtures.js";
import { e2eSandboxes, lines, submitAs, WAITING, type E2e } from "../helpers/sandbox.js";
import { deflatedRepeat, MAIN_NS, workbookParts, zipWithDeflated } from "../helpers/workbook-parts.js";
import { readWorkbook } from "../helpers/xlsx.js";

/**
 * Workbooks as the writers analysts use write them (test/fixtures/workbooks/make-workbooks.sh):
 * openpyxl (and so pandas' to_excel) names its parts by absolute paths and writes inline
 * strings; LibreOffice puts the shared strings after the sheets and caches formulas' values.
 * Each holds the same CRM sheet, "Contacts", after a hidden sheet "Old" (but pandas').
 */
const FIXTURES = fileURLToPath(new URL("../fixtures/workbooks/", import.meta.url));

const sandbox = e2eSandboxes();
const PRODUCT = "number_validation_batch";
const NO_RESULT_RATE = 0.3;

/** The Contacts sheet's rows as every reader must see them (openpyxl caches no formula value: Di's phone is blank). */
function contactRows(writer: "openpyxl" | "libreoffice"): string[][] {
  return [
    ["id", "name", "phone", "mobile", "since", "active", "note"],
    ["1", "Amy", "447400100001", "+44 7400 100001", "2024-01-31", "TRUE", ""],
    ["2", "Bob", "07400100002", "07400 100002", "2024-02-01 09:30:05", "FALSE", "=1+1"],
    ["", "", "", "", "", "", ""],
    ["4", "Cy", "4.47400100003123E+15", "+44 (0)7400 100003", "", "", "rounded by Excel"],
    ["5", "Di", writer === "libreoffice" ? "447400100004" : "", "+44 7400 100005", "", "", ""],
    ["6", "Ed", "447400100006", "0044 7400 100006", "", "", ""],
    ["7", "Flo", "447400100007", "07400100007", "", "", ""],
    ["8", "Gus", "447400100001", "+44 7400 100001", "", "", "repeat of Amy"],
  ];
}

const MOBILES = ["447400100001", "447400100002", "447400100003", "447400100005", "447400100006", "447400100007"];

async function smallTaskSandbox(): Promise<E2e> {
  const e = await sandbox({ minTaskSize: 1, noResultRate: NO_RESULT_RATE, fakeClock: false });
  await allowSmallTasks(e);
  return e;
}

/** A fixture copied into the test's directory. */
function fixture(e: E2e, name: string): string {
  const path = join(e.dir, name);
  copyFileSync(join(FIXTURES, name), path);
  return path;
}

describe("workbooks written by openpyxl, pandas and LibreOffice", () => {
  it.each([
    ["openpyxl", "openpyxl.xlsx", ["447400100001", "447400100002", "447400100006", "447400100007"], { blank: 2, invalid_cnt: 1 }],
    [
      "LibreOffice",
      "libreoffice.xlsx",
      ["447400100001", "447400100002", "447400100004", "447400100006", "447400100007"],
      { blank: 1, invalid_cnt: 1 },
    ],
  ] as const)(
    "validates %s's workbook: the first visible sheet, its number and text columns as they show",
    async (_writer, name, phones, counts) => {
      const e = await smallTaskSandbox();
      const path = fixture(e, name);
      const byText = await e.bin(["validate", path, "--country", "GB", "--column", "mobile", "-o", "mobile.txt", "--json"]);
      expect(byText.code, byText.stderr).toBe(0);
      expect(JSON.parse(byText.stdout)).toMatchObject({
        rows_read: 8,
        kept: 6,
        duplicate_cnt: 1,
        blank: 1,
        format: { kind: "xlsx", sheet: "Contacts" },
      });
      expect(lines(readFileSync(join(e.dir, "mobile.txt"), "utf8"))).toEqual(MOBILES);
      const byNumber = await e.bin(["validate", path, "--country", "GB", "--column", "phone", "-o", "phone.txt", "--json"]);
      expect(byNumber.code, byNumber.stderr).toBe(0);
      expect(JSON.parse(byNumber.stdout)).toMatchObject({ rows_read: 8, kept: phones.length, duplicate_cnt: 1, ...counts });
      expect(lines(readFileSync(join(e.dir, "phone.txt"), "utf8"))).toEqual(phones);
      const hidden = await e.bin(["validate", path, "--country", "GB", "--sheet", "old", "--json"]);
      expect(JSON.parse(hidden.stdout)).toMatchObject({ rows_read: 1, kept: 1, format: { sheet: "Old" } });
    },
  );

  it("validates a DataFrame written by pandas' to_excel", async () => {
    const e = await smallTaskSandbox();
    const out = await e.bin(["validate", fixture(e, "pandas.xlsx"), "--country", "GB", "--column", "phone", "-o", "phone.txt", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ rows_read: 4, kept: 3, blank: 1, format: { kind: "xlsx", sheet: "Contacts" } });
    expect(lines(readFileSync(join(e.dir, "phone.txt"), "utf8"))).toEqual(["447400100001", "447400100002", "447400100004"]);
  });

  it.each(["openpyxl.xlsx", "libreoffice.xlsx"])(
    "submits %s and joins the results back: every source row, as the sheet shows it, in a workbook and in CSV",
    async (name) => {
      const e = await smallTaskSandbox();
      const path = fixture(e, name);
      const submitted = await e.bin(submitAs(path, PRODUCT, "GB", "--column", "mobile", ...WAITING, "--join", "-o", "joined.xlsx"));
      expect(submitted.code, submitted.stderr).toBe(0);
      const [task] = e.state().tasks;
      expect(task!.total).toBe(MOBILES.length);

      const source = contactRows(name === "openpyxl.xlsx" ? "openpyxl" : "libreoffice");
      const statusOf = (row: readonly string[]) => {
        if (row[3] === "") return { id: "", status: "blank" };
        const id = MOBILES.find((mobile) => row[3]!.replace(/\D/g, "").endsWith(mobile.slice(2)))!;
        if (row[1] === "Gus") return { id, status: "duplicate" };
        return { id, status: expectedResult(PRODUCT, id, NO_RESULT_RATE) ? "checked" : "no_result" };
      };
      const [results] = await readWorkbook(join(e.dir, "joined.xlsx"));
      expect(results!.rows[0]).toEqual([...source[0]!, "identifier", "activated", "bulkcheck_status", "bc_checked_at"]);
      const body = results!.rows.slice(1);
      expect(body.map((row) => row.slice(0, 7))).toEqual(source.slice(1));
      // A row with a result says when it was checked: its task's checked_at, as the store knows it.
      const checkedAt = (await checkedAtByTask(e)).get(task!.id)!;
      expect(new Date(checkedAt).toISOString()).toBe(checkedAt);
      expect(body.map((row) => [row[7], row[9], row[10]])).toEqual(
        source.slice(1).map((row) => {
          const { id, status } = statusOf(row);
          return [id, status, id && expectedResult(PRODUCT, id, NO_RESULT_RATE) ? checkedAt : ""];
        }),
      );

      const csv = await e.bin(["download", task!.id, "--join", path, "-o", "joined.csv"]);
      expect(csv.code, csv.stderr).toBe(0);
      // The same join into CSV: the sheet's cells as text, then the same added columns.
      expect(parseDelimited(readFileSync(join(e.dir, "joined.csv"), "utf8"))).toEqual(results!.rows.map((row) => row.map(String)));
    },
  );
});

describe("reading a workbook", () => {
  it("writes nothing to $TMPDIR but preparation's own work directory, even with the shared strings after the sheet", async () => {
    // exceljs's streaming reader spooled such a sheet to a temp file there, which vanished under it at times (issue 18, point 5).
    const e = await smallTaskSandbox();
    const tmp = mkdtempSync(join(e.dir, "tmp-"));
    const created: string[] = [];
    const watcher = watch(tmp, (_event, name) => {
      if (name !== null) created.push(name);
    });
    try {
      const out = await e.bin(["validate", fixture(e, "libreoffice.xlsx"), "--country", "GB", "--column", "mobile", "-o", "mobile.txt"], {
        env: { TMPDIR: tmp },
      });
      expect(out.code, out.stderr).toBe(0);
    } finally {
      watcher.close();
    }
    expect(created.filter((name) => !name.startsWith("bulkcheck-"))).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe("workbook bombs", () => {
  /** 1 GB of sheet XML in about a megabyte, and one 300 MB shared string in 300 KB (issue 18, point 9). */
  function bombs(e: E2e): { sheet: string; string: string } {
    const sheet = join(e.dir, "sheet-bomb.xlsx");
    const rows = deflatedRepeat(`<worksheet xmlns="${MAIN_NS}"><sheetData>`, "<row/>".repeat(1 << 20), 160, "</sheetData></worksheet>");
    writeFileSync(sheet, zipWithDeflated({ ...workbookParts({}), "xl/worksheets/sheet1.xml": rows }));
    const string = join(e.dir, "string-bomb.xlsx");
    const text = deflatedRepeat(`<sst xmlns="${MAIN_NS}"><si><t>`, "A".repeat(1 << 20), 300, "</t></si></sst>");
    writeFileSync(string, zipWithDeflated({ ...workbookParts({ sharedStrings: [] }), "xl/sharedStrings.xml": text }));
    return { sheet, string };
  }

  it("refuses both with exit 3 before inflating them, saying which part and why, and uploads nothing", async () => {
    const e = await smallTaskSandbox();
    const { sheet, string } = bombs(e);
    const validated = await e.bin(["validate", sheet, "--country", "GB"]);
    expect(validated.code).toBe(3);
    expect(validated.stderr).toMatch(
      /sheet-bomb\.xlsx cannot be read as an Excel workbook: its part xl\/worksheets\/sheet1\.xml expands \d+-fold, over the 200-fold limit; it looks like a zip bomb\./,
    );
    const submitted = await e.bin(submitAs(string, PRODUCT, "GB", "--yes"));
    expect(submitted.code).toBe(3);
    expect(submitted.stderr).toMatch(
      /string-bomb\.xlsx cannot be read as an Excel workbook: its part xl\/sharedStrings\.xml expands \d+-fold/,
    );
    expect(e.state().tasks).toHaveLength(0);
  });
});

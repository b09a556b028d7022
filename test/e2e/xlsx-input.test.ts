import { spawn } from "node:child_process";
import { openSync, closeSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { allowSmallTasks, checkedAtByTask, expectedResult, parseDelimited } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, identifier, lines, submitAs, WAITING, type E2e } from "../helpers/sandbox.js";
import { readWorkbook, summaryPairs, writeWorkbook, type CellSpec } from "../helpers/xlsx.js";

const sandbox = e2eSandboxes();
const PRODUCT = "number_validation_batch";
const NO_RESULT_RATE = 0.3;
const HEADER = ["id", "name", "phone", "mobile", "note"];

/** One row of the CRM sheet as written, what its cells read as, and the identifier its phone cell holds (if any). */
interface CrmRow {
  cells: CellSpec[] | undefined;
  text: string[];
  id?: string;
  status?: "blank" | "invalid" | "duplicate";
}

/**
 * A CRM export as Excel keeps it: the phone column typed as numbers (one padded with a
 * zero by its format, one Excel rounded), the same numbers as text in another column,
 * values that look like formulas, rows Excel never filled, and a second sheet.
 */
function crmRows(): CrmRow[] {
  const rows: CrmRow[] = gbList(24, 4000).map((number, i) => {
    const id = identifier(number);
    const national = "0" + number.replace(/^\+44 /, "");
    return { cells: [i + 1, `Customer ${i}`, Number(id), national, ""], text: [String(i + 1), `Customer ${i}`, id, national], id };
  });
  rows[3]!.cells![4] = "=1+1";
  rows[3]!.text[4] = "=1+1";
  rows[5]!.cells![4] = '=HYPERLINK("http://evil.example","x")';
  rows[5]!.text[4] = '=HYPERLINK("http://evil.example","x")';
  const lostLeadingZero = rows[7]!.id!.slice(2);
  rows[7]!.cells![2] = { value: Number(lostLeadingZero), numFmt: "00000000000" };
  rows[7]!.text[2] = "0" + lostLeadingZero;
  rows.splice(10, 0, { cells: undefined, text: [], status: "blank" });
  rows.splice(15, 0, {
    cells: [99, "Rounded by Excel", 4474001234567891, "", ""],
    text: ["99", "Rounded by Excel", "4.47400123456789E+15"],
    status: "invalid",
  });
  rows.push({ cells: undefined, text: [], status: "blank" });
  rows.push({
    cells: [100, "Repeat", Number(rows[0]!.id), "", ""],
    text: ["100", "Repeat", rows[0]!.id!],
    id: rows[0]!.id!,
    status: "duplicate",
  });
  return rows;
}

async function crmWorkbook(e: E2e, rows = crmRows()): Promise<string> {
  return writeWorkbook(join(e.dir, "crm.xlsx"), [
    { name: "Contacts", rows: [HEADER, ...rows.map((row) => row.cells)] },
    { name: "Notes", rows: [["phone"], ["+44 7400 999999"]] },
  ]);
}

async function smallTaskSandbox(): Promise<E2e> {
  const e = await sandbox({ minTaskSize: 1, noResultRate: NO_RESULT_RATE });
  await allowSmallTasks(e);
  return e;
}

/**
 * The joined row each source row must become: its cells as text (padded), identifier, activated,
 * bulkcheck_status, and bc_checked_at (the task's `checkedAt` where the row has a result).
 */
function expectedJoin(rows: readonly CrmRow[], checkedAt: string): Array<Array<string | boolean>> {
  return rows.map((row) => {
    const source = [...row.text, ...new Array<string>(HEADER.length - row.text.length).fill("")];
    if (row.status === "blank" || row.status === "invalid") return [...source, "", "", row.status, ""];
    const result = expectedResult(PRODUCT, row.id!, NO_RESULT_RATE);
    const activated = result === undefined ? "" : result[0] === "true";
    const status = row.status ?? (result === undefined ? "no_result" : "checked");
    return [...source, row.id!, activated, status, result === undefined ? "" : checkedAt];
  });
}

/** Runs the built binary with a file as its stdin. */
function binWithStdin(e: E2e, argv: string[], stdinPath: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const fd = openSync(stdinPath, "r");
  const child = spawn(process.execPath, [BIN, ...argv], {
    env: { PATH: process.env.PATH, HOME: e.dir, ...e.env },
    cwd: e.dir,
    stdio: [fd, "pipe", "pipe"],
  });
  closeSync(fd);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("Excel input", () => {
  it("validates a CRM workbook's number-typed and text phone columns alike, from a file or stdin, and never reads the second sheet", async () => {
    const e = await smallTaskSandbox();
    const path = await crmWorkbook(e);
    const byNumber = await e.run(["validate", path, "--country", "GB", "--column", "phone", "-o", "phone.txt", "--json"]);
    expect(byNumber.code, byNumber.stderr).toBe(0);
    const summary = JSON.parse(byNumber.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ rows_read: 28, kept: 24, invalid_cnt: 1, duplicate_cnt: 1, blank: 2 });
    expect(summary.format).toEqual({ kind: "xlsx", has_header: true, encoding: "utf8", sheet: "Contacts" });
    const ids = crmRows().flatMap((row) => (row.id && row.status === undefined ? [row.id] : []));
    expect(lines(readFileSync(join(e.dir, "phone.txt"), "utf8"))).toEqual(ids);

    const byText = await e.run(["validate", path, "--country", "GB", "--column", "mobile", "-o", "mobile.txt"]);
    expect(byText.code, byText.stderr).toBe(0);
    expect(byText.stderr).toContain('Reading phone numbers from column 4 "mobile" of sheet "Contacts" (chosen by --column).');
    expect(lines(readFileSync(join(e.dir, "mobile.txt"), "utf8"))).toEqual(ids);

    const piped = await binWithStdin(e, ["validate", "-", "--country", "GB", "--column", "phone", "--json"], path);
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout)).toEqual(summary);

    const notes = await e.run(["validate", path, "--country", "GB", "--sheet", "2", "--json"]);
    expect(notes.code, notes.stderr).toBe(0);
    expect(JSON.parse(notes.stdout)).toMatchObject({ rows_read: 1, kept: 1, format: { sheet: "Notes" } });
  });

  it("submits a workbook and joins the results back into a workbook: every source row in order, as text, nothing a formula", async () => {
    const e = await smallTaskSandbox();
    const rows = crmRows();
    const path = await crmWorkbook(e, rows);
    const out = await e.run(submitAs(path, PRODUCT, "GB", "--column", "phone", ...WAITING, "--join", "-o", "crm-checked.xlsx"));
    expect(out.code, out.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(1);
    expect(e.state().tasks[0]!.total).toBe(24);

    const [results, summary, ...more] = await readWorkbook(join(e.dir, "crm-checked.xlsx"));
    expect(more).toEqual([]);
    expect(results!.formulas + summary!.formulas).toBe(0);
    expect(results!.rows[0]).toEqual([...HEADER, "identifier", "activated", "bulkcheck_status", "bc_checked_at"]);
    const checkedAt = (await checkedAtByTask(e)).get(e.state().tasks[0]!.id)!;
    expect(new Date(checkedAt).toISOString()).toBe(checkedAt);
    expect(results!.rows.slice(1)).toEqual(expectedJoin(rows, checkedAt));
    // The source's cells are text cells, the number-typed phone column included.
    const sourceKinds = new Set(results!.kinds.slice(1).flatMap((kinds) => kinds.slice(0, HEADER.length)));
    expect([...sourceKinds].sort()).toEqual(["blank", "string"]);
    const pairs = summaryPairs(summary!);
    expect(pairs.get("Rows written")).toBe(rows.length);
    expect(pairs.get("blank")).toBe(2);
    expect(pairs.get("Tasks")).toBe(e.state().tasks[0]!.id);

    // The same join into CSV: the sheet's cells as text, then the same added columns.
    const id = e.state().tasks[0]!.id;
    const csv = await e.run(["download", id, "--join", path, "-o", "crm-checked.csv"]);
    expect(csv.code, csv.stderr).toBe(0);
    const asText = results!.rows.map((row) => row.map(String));
    expect(parseDelimited(readFileSync(join(e.dir, "crm-checked.csv"), "utf8"))).toEqual(asText);
  });

  it("retries a workbook's numbers without a result, re-reading the journalled sheet and column", async () => {
    const e = await smallTaskSandbox();
    const rows = crmRows();
    const path = await crmWorkbook(e, rows);
    const submitted = await e.run(submitAs(path, PRODUCT, "GB", "--column", "phone", "--sheet", "Contacts", ...WAITING));
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = lines(submitted.stdout)[0]!;
    const misses = rows.filter((row) => row.id && row.status === undefined && !expectedResult(PRODUCT, row.id, NO_RESULT_RATE));
    expect(misses.length).toBeGreaterThan(0);
    const retried = await e.run(["retry-failed", id, "--yes"]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(e.state().tasks.map((task) => task.total)).toEqual([24, misses.length]);
  });

  it("classifies a workbook on worker threads exactly as in one thread", async () => {
    const e = await smallTaskSandbox();
    const path = await crmWorkbook(e);
    const one = await e.bin(["validate", path, "--country", "GB", "--column", "phone", "-o", "one.txt", "--rejects", "one.csv", "--json"]);
    const two = await e.bin([
      "validate",
      path,
      "--country",
      "GB",
      "--column",
      "phone",
      "-o",
      "two.txt",
      "--rejects",
      "two.csv",
      "--json",
      "--threads",
      "2",
    ]);
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    expect(JSON.parse(two.stdout)).toEqual(JSON.parse(one.stdout));
    for (const [a, b] of [
      ["one.txt", "two.txt"],
      ["one.csv", "two.csv"],
    ]) {
      expect(readFileSync(join(e.dir, b!), "utf8")).toBe(readFileSync(join(e.dir, a!), "utf8"));
    }
  });

  it("refuses an old .xls workbook (exit 3) and an unknown sheet (exit 2), saying what to do", async () => {
    const e = await smallTaskSandbox();
    const xls = join(e.dir, "old.xls");
    writeFileSync(xls, Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]));
    const old = await e.run(["validate", xls, "--country", "GB"]);
    expect(old.code).toBe(3);
    expect(old.stderr).toContain("is an old Excel workbook (.xls)");
    expect(old.stderr).toContain("save it as Excel Workbook (.xlsx) or CSV UTF-8");

    const path = await crmWorkbook(e);
    const missing = await e.run(submitAs(path, PRODUCT, "GB", "--sheet", "Leads", "--yes"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('has no sheet "Leads" (sheets: 1 "Contacts", 2 "Notes")');
    expect(e.state().tasks).toHaveLength(0);
  });
});

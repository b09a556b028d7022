import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ServiceType } from "../../src/spec/products.js";
import { BIN } from "../helpers/cli.js";
import { allowSmallTasks, checkedAtByTask, oneTaskService, parseDelimited, tamperingProxy } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, submitAs, submittedIds, WAITING, type E2e } from "../helpers/sandbox.js";
import { readWorkbook, summaryPairs } from "../helpers/xlsx.js";

const sandbox = e2eSandboxes();

/** Mobiles, landlines (which carry a city) and a Jersey number. */
const NUMBERS = [...gbList(40), "+44 20 7183 8750", "+44 131 496 0000", "+44 161 496 0000", "+44 1534 123456"];

async function smallTaskSandbox(): Promise<E2e> {
  const e = await sandbox({ minTaskSize: 1, noResultRate: 0.2 });
  await allowSmallTasks(e);
  return e;
}

async function finishedTask(e: E2e, product: ServiceType, numbers: readonly string[] = NUMBERS): Promise<string> {
  const out = await e.run(submitAs(e.file(`${product}.txt`, numbers.join("\n") + "\n"), product, "GB", "--yes", "--quiet"));
  expect(out.code, out.stderr).toBe(0);
  const id = out.stdout.trim();
  expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
  return id;
}

/** The CSV download's rows as a workbook holds them: `activated` as booleans, every other value the same text. */
function asCells(rows: readonly string[][]): Array<Array<string | boolean>> {
  const activated = rows[0]!.indexOf("activated");
  return rows.map((row, r) =>
    row.map((value, c) => (r > 0 && c === activated && (value === "true" || value === "false") ? value === "true" : value)),
  );
}

/** Runs the built binary with stdout piped, and keeps stdout as bytes. */
function binaryStdout(
  argv: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...argv], { env: { PATH: process.env.PATH, HOME: cwd, ...env }, cwd });
  const chunks: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr }));
  });
}

describe("Excel output", () => {
  it.each(["number_validation_batch", "carrier_batch"] as const)(
    "writes every %s row of -o results.xlsx as the CSV has it, and a Summary sheet with the --json summary's figures",
    async (product) => {
      const e = await smallTaskSandbox();
      const id = await finishedTask(e, product);
      const csv = await e.run(["download", id, "-o", "results.csv"]);
      expect(csv.code, csv.stderr).toBe(0);
      const out = await e.run(["download", id, "-o", "results.xlsx", "--json"]);
      expect(out.code, out.stderr).toBe(0);
      const summary = JSON.parse(out.stdout) as Record<string, unknown>;
      expect(summary.format).toBe("xlsx");

      const [results, sheet, ...more] = await readWorkbook(join(e.dir, "results.xlsx"));
      expect(more).toEqual([]);
      const expected = asCells(parseDelimited(readFileSync(join(e.dir, "results.csv"), "utf8")));
      expect(results!.name).toBe("Results");
      expect(results!.rows).toEqual(expected);
      expect(results!.formulas).toBe(0);
      expect(new Set(results!.kinds.slice(1).flatMap((row) => row))).toEqual(
        new Set(product === "carrier_batch" ? ["string", "blank"] : ["string", "boolean"]),
      );

      expect(sheet!.name).toBe("Summary");
      expect(sheet!.formulas).toBe(0);
      const pairs = summaryPairs(sheet!);
      expect(pairs.get("Product")).toBe(product);
      expect(pairs.get("Tasks")).toBe(id);
      expect(pairs.get("Rows written")).toBe(summary.rows_written);
      expect(pairs.get("Rows written")).toBe(expected.length - 1);
      expect(pairs.get("Checked")).toBe(summary.checked);
      expect(pairs.get("No result")).toBe(summary.no_result);
      // Money as numbers in a currency format, exact to the micro, which a spreadsheet can add up (it was text).
      expect(pairs.get("Charged")).toBe((summary.charged_micros as number) / 1_000_000);
      expect(pairs.get("Refunded")).toBe((summary.refunded_micros as number) / 1_000_000);
      for (const label of ["Charged", "Refunded"]) {
        const row = sheet!.rows.findIndex((cells) => cells[0] === label);
        expect(sheet!.kinds[row]![1]).toBe("number");
        expect(sheet!.numFmts[row]![1]).toBe('"$"#,##0.00####');
      }
      if (product === "carrier_batch") {
        for (const { value, count } of summary.top_carriers as Array<{ value: string; count: number }>) {
          expect(sheet!.rows).toContainEqual([value === "" ? "(empty)" : value, count, ""]);
        }
      } else {
        const activated = summary.activated as { true: number; false: number };
        expect(pairs.get("true")).toBe(activated.true);
        expect(pairs.get("false")).toBe(activated.false);
      }
    },
  );

  it("pipes --format xlsx to stdout as a workbook, and refuses it on a terminal before any request", async () => {
    const e = await smallTaskSandbox();
    const id = await finishedTask(e, "number_activity_batch");
    const piped = await binaryStdout(["download", id, "--format", "xlsx"], e.env, e.dir);
    expect(piped.code, piped.stderr).toBe(0);
    const [results] = await readWorkbook(piped.stdout);
    const csv = await e.run(["download", id]);
    expect(results!.rows).toEqual(asCells(parseDelimited(csv.stdout)));

    const requests = e.state().stats.requests;
    const tty = await e.run(["download", id, "--format", "xlsx"], { tty: true });
    expect(tty.code).toBe(2);
    expect(tty.stdout).toBe("");
    expect(tty.stderr).toContain("--format xlsx writes an Excel workbook, which a terminal cannot show.");
    expect(e.state().stats.requests).toBe(requests);
  });

  it("writes Excel from submit --wait -o FILE.XLSX and retry-failed --wait -o, chosen by the extension in any case", async () => {
    const e = await smallTaskSandbox();
    const file = e.file("list.txt", NUMBERS.join("\n") + "\n");
    const submitted = await e.run(submitAs(file, "number_validation_batch", "GB", ...WAITING, "-o", "OUT.XLSX"));
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submittedIds(submitted.stderr)[0]!;
    // A run's output: the task's own download (exactly the service's columns), then when the store says it was checked.
    const checkedAt = (await checkedAtByTask(e)).get(id)!;
    expect(new Date(checkedAt).toISOString()).toBe(checkedAt);
    const downloaded = parseDelimited((await e.run(["download", id])).stdout);
    const [results] = await readWorkbook(join(e.dir, "OUT.XLSX"));
    expect(results!.rows).toEqual(asCells(downloaded.map((row, r) => [...row, r === 0 ? "checked_at" : checkedAt])));

    const retried = await e.run(["retry-failed", id, "--yes", "--wait", "--interval", "0.2", "-o", "retried.xlsx"]);
    expect(retried.code, retried.stderr).toBe(0);
    const retryId = submittedIds(retried.stderr)[0]!;
    const [again, summary] = await readWorkbook(join(e.dir, "retried.xlsx"));
    // The sandbox's misses are fixed per number, so the retried numbers miss again: the sheet may hold only its header.
    // retry-failed writes its task's download as it is: exactly the service's columns.
    expect(again!.rows).toEqual(asCells(parseDelimited((await e.run(["download", retryId])).stdout)));
    expect(summaryPairs(summary!).get("Tasks")).toBe(retryId);
  });

  it("refuses a value past Excel's 32,767 characters alike in submit -o FILE.xlsx and ledger export --format xlsx: exit 3 with the hint, no stack trace", async () => {
    const e = await sandbox({ minTaskSize: 1, fakeClock: false });
    await allowSmallTasks(e);
    const carrier = "V".repeat(40_000);
    const proxy = await tamperingProxy(e.sandbox.url, { result: (csv) => csv.replace(/^(\d+),([^,\n]*),/m, `$1,${carrier},`) });
    try {
      const env = { env: { BULKCHECK_BASE_URL: proxy.url } };
      const file = e.file("list.txt", gbList(3).join("\n") + "\n");
      const submitted = await e.bin(submitAs(file, "carrier_batch", "GB", ...WAITING, "-o", "out.xlsx"), env);
      expect(submitted.code, submitted.stderr).toBe(3);
      const refusal =
        "an Excel cell holds at most 32,767.\nNothing was written. Write CSV instead (--format csv), which has no such limit.";
      expect(submitted.stderr).toContain(refusal);

      const exported = await e.bin(["ledger", "export", "--format", "xlsx", "-o", "ledger.xlsx"]);
      expect(exported.code, exported.stderr).toBe(3);
      expect(exported.stderr).toContain(refusal);
      expect(existsSync(join(e.dir, "ledger.xlsx"))).toBe(false);
      const csv = await e.bin(["ledger", "export", "-o", "ledger.csv"]);
      expect(csv.code, csv.stderr).toBe(0);
      expect(readFileSync(join(e.dir, "ledger.csv"), "utf8")).toContain(carrier);
    } finally {
      await proxy.close();
    }
  });

  it("joins a CSV source into a workbook: its fields as text cells, as the CSV join has them, and refuses other formats", async () => {
    const e = await smallTaskSandbox();
    const crm = e.file(
      "crm.csv",
      ["name,phone,note", ...NUMBERS.map((n, i) => `c${i},${n},${i === 2 ? "=1+1" : "0044"}`)].join("\n") + "\n",
    );
    const submitted = await e.run(submitAs(crm, "number_validation_batch", "GB", ...WAITING, "--join", "-o", "crm-checked.xlsx"));
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submittedIds(submitted.stderr)[0]!;
    const csv = await e.run(["download", id, "--join", crm, "-o", "crm-checked.csv"]);
    expect(csv.code, csv.stderr).toBe(0);
    const expected = asCells(parseDelimited(readFileSync(join(e.dir, "crm-checked.csv"), "utf8")));
    for (const flags of [[], ["-o", "again.Xlsx"], ["--format", "xlsx", "-o", "again.bin"]]) {
      const path = flags.length === 0 ? "crm-checked.xlsx" : flags.at(-1)!;
      if (flags.length > 0) expect((await e.run(["download", id, "--join", crm, ...flags])).code).toBe(0);
      const [results, summary] = await readWorkbook(join(e.dir, path));
      expect(results!.rows).toEqual(expected);
      expect(results!.formulas).toBe(0);
      // "0044" and "=1+1" stay text; only `activated` holds booleans.
      expect(new Set(results!.kinds.slice(1).flatMap((row) => row.slice(0, 3)))).toEqual(new Set(["string"]));
      expect(summaryPairs(summary!).get("Rows written")).toBe(NUMBERS.length);
    }

    const requests = e.state().stats.requests;
    const tsv = await e.run(["download", id, "--join", crm, "--format", "tsv", "-o", "crm.tsv"]);
    expect(tsv.code).toBe(2);
    expect(tsv.stderr).toContain("--join writes the source file's own format; drop --format.");
    const tty = await e.run(["download", id, "--join", crm, "--format", "xlsx"], { tty: true });
    expect(tty.code).toBe(2);
    expect(tty.stderr).toContain("--format xlsx writes an Excel workbook, which a terminal cannot show.");
    expect(e.state().stats.requests).toBe(requests);
    expect(existsSync(join(e.dir, "crm.tsv"))).toBe(false);
  });

  it("keeps values that look like formulas or numbers as text, and hostile names exactly", async () => {
    const hostile = ["=1+1", "+44 7400 100000", "-2+3", "@SUM(A1:A9)", '=HYPERLINK("http://evil","x")', "<b>&amp;</b>", " 00123 "];
    const body = [
      "identifier,carrier,underlying_carrier,number_type,country_code,region,city",
      ...hostile.map((value, i) => `4474001000${10 + i},"${value.replaceAll('"', '""')}",Net,mobile,GB,,`),
    ].join("\n");
    const service = await oneTaskService({
      body,
      contentType: "text/csv",
      task: { product: "carrier_batch", total: hostile.length, success_cnt: hostile.length },
    });
    try {
      const e = await sandbox();
      const out = await e.run(["download", service.id, "-o", "hostile.xlsx"], { env: { BULKCHECK_BASE_URL: service.url } });
      expect(out.code, out.stderr).toBe(0);
      const [results] = await readWorkbook(join(e.dir, "hostile.xlsx"));
      expect(results!.formulas).toBe(0);
      expect(results!.rows.slice(1).map((row) => row[1])).toEqual(hostile);
      expect(results!.rows[1]![0]).toBe("447400100010");
      expect(new Set(results!.kinds.slice(1).map((row) => row[1]))).toEqual(new Set(["string"]));
    } finally {
      await service.close();
    }
  });
});

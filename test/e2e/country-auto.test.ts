import { readFileSync } from "node:fs";
import { join } from "node:path";
import { numberOf, parsePage, tableRows } from "../helpers/html.js";
import { describe, expect, it } from "vitest";
import { allowSmallTasks, checkedAtByTask, parseDelimited } from "../helpers/results-fixtures.js";
import { e2eSandboxes, lines, submittedIds, WAITING, type E2e } from "../helpers/sandbox.js";
import { readWorkbook } from "../helpers/xlsx.js";

const sandbox = e2eSandboxes();

const GB = Array.from({ length: 10 }, (_, i) => `+44 7400 ${100_000 + i}`);
const US = Array.from({ length: 6 }, (_, i) => `+1 212 736 ${String(100 + i).padStart(4, "0")}`);
const FR = ["+33 6 12 34 56 78", "+33 6 12 34 56 79", "+33 1 42 68 53 00"];
/** Written nationally: GB's with --default-country GB, else no_code. */
const NATIONAL_GB = "07400 200000";

/** A CRM export of three countries, interleaved, with a nationally written number and a blank row. */
function crmRows(): string[][] {
  const [gb, us, fr] = [[...GB], [...US], [...FR]];
  const phones: string[] = [];
  for (const c of "GUGFUGGUGFGUGUGFG") phones.push((c === "G" ? gb : c === "U" ? us : fr).shift()!);
  phones.push(...gb, ...us);
  phones.splice(3, 0, NATIONAL_GB);
  phones.splice(5, 0, "");
  return [["name", "phone"], ...phones.map((phone, i) => [`c${i}`, phone])];
}

/** min-task-size 5 leaves FR (3 numbers) out; max-task-size 8 splits GB (11) into two tasks. */
async function mixedCountrySandbox(): Promise<{ e: E2e; crm: string }> {
  const e = await sandbox({ minTaskSize: 1, noResultRate: 0.3 });
  await allowSmallTasks(e, 8);
  expect((await e.run(["config", "set", "min-task-size", "5"])).code).toBe(0);
  const crm = e.file(
    "crm.csv",
    crmRows()
      .map((row) => row.join(","))
      .join("\n") + "\n",
  );
  return { e, crm };
}

const AUTO = ["--type", "number_activity_batch", "--country", "auto"];

describe("--country auto groups by the calling code's main country, which the service routes on", () => {
  /** A GB list as CRMs hold them: mainland numbers with a few from Jersey, Guernsey and the Isle of Man (all +44). */
  const CROWN_DEPENDENCIES = ["+44 1534 456789", "+44 1534 456790", "+44 7781 123456", "+44 1481 712345", "+44 7624 123456"];
  /** A US list with Canadian and Jamaican numbers (all +1). */
  const NANP_NEIGHBOURS = ["+1 416 736 0100", "+1 416 736 0101", "+1 876 234 5678"];

  it("keeps a GB list's JE, GG and IM numbers in GB's task, as --country GB and validate do", async () => {
    const e = await sandbox({ minTaskSize: 1, fakeClock: false });
    await allowSmallTasks(e, 100);
    expect((await e.bin(["config", "set", "min-task-size", "5"])).code).toBe(0);
    const gb = [...GB, ...CROWN_DEPENDENCIES];
    const us = [...US, ...NANP_NEIGHBOURS];
    const list = e.file("mixed.txt", [...gb, ...us].join("\n") + "\n");
    const kept = async (argv: string[]) => {
      const out = await e.bin(["validate", list, ...argv, "--json"]);
      expect(out.code, out.stderr).toBe(0);
      return (JSON.parse(out.stdout) as { kept: number }).kept;
    };
    expect(await kept(["--country", "auto"])).toBe(gb.length + us.length);
    expect(await kept(["--country", "GB"])).toBe(gb.length); // the US numbers are other_country there

    const plan = await e.bin(["submit", list, ...AUTO, "--dry-run"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toMatch(new RegExp(`^ {2}GB: ${gb.length} numbers in 1 task\\(s\\)`, "m"));
    expect(plan.stderr).toMatch(new RegExp(`^ {2}US: ${us.length} numbers in 1 task\\(s\\)`, "m"));
    expect(plan.stderr).not.toMatch(/below_min_task|\b(JE|GG|IM|CA|JM):/);

    const submitted = await e.bin(["submit", list, ...AUTO, "--yes", "--json"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const tasks = lines(submitted.stdout)
      .map((line) => JSON.parse(line) as { type: string; id: string; preparation: Record<string, unknown> })
      .filter((object) => object.type === "task");
    expect(tasks[0]!.preparation).toMatchObject({ kept: gb.length + us.length });
    expect(tasks[0]!.preparation.below_min_task ?? 0).toBe(0);
    // The service, by its own rule, keeps every number it is given in its task country.
    expect((await e.bin(["wait", ...tasks.map((task) => task.id), "--interval", "0.2", "--quiet"])).code).toBe(0);
    const created = new Map(e.state().tasks.map((task) => [task.id, task]));
    expect(tasks.map((task) => created.get(task.id))).toMatchObject([
      { country: "GB", submitted_lines: gb.length, total: gb.length, other_country_cnt: 0 },
      { country: "US", submitted_lines: us.length, total: us.length, other_country_cnt: 0 },
    ]);
  });
});

describe("submit --country auto", () => {
  it("shows the plan and cost per country before anything is reserved, with the country below the minimum left out", async () => {
    const { e, crm } = await mixedCountrySandbox();
    const plan = await e.run(["submit", crm, ...AUTO, "--default-country", "GB", "--dry-run"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toMatch(/^Plan: 17 numbers in 3 task\(s\) of number_activity_batch for GB, US; reservation \$0\.051/m);
    expect(plan.stderr).toMatch(/^ {2}GB: 11 numbers in 2 task\(s\), reservation \$0\.033$/m);
    expect(plan.stderr).toMatch(/^ {2}US: 6 numbers in 1 task\(s\), reservation \$0\.018$/m);
    expect(plan.stderr).toMatch(/^ {2}FR: 3 numbers, not submitted \(below_min_task: the minimum task size is 5\)$/m);
    expect(plan.stderr).toMatch(/^below_min_task +3$/m);
    expect(e.state().tasks).toEqual([]);
    expect(e.state().reserved_micros).toBe(0);

    // Without --default-country the nationally written number has no country to be read in.
    const noDefault = await e.run(["submit", crm, ...AUTO, "--dry-run"]);
    expect(noDefault.stderr).toMatch(/^no_code_cnt +1$/m);
    expect(noDefault.stderr).toMatch(/^ {2}GB: 10 numbers in 2 task\(s\)/m);
  });

  it("prints the plan as one JSON object on stdout with --dry-run --json: per country, what is left out and why, price and totals", async () => {
    const { e, crm } = await mixedCountrySandbox();
    const out = await e.bin(["submit", crm, ...AUTO, "--default-country", "GB", "--dry-run", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    expect(lines(out.stdout)).toHaveLength(1);
    const plan = JSON.parse(out.stdout) as Record<string, unknown>;
    expect(plan).toMatchObject({
      dry_run: true,
      product: "number_activity_batch",
      country: "auto",
      price_micros: 3000,
      price_usd: 0.003,
      numbers: 17,
      tasks: 3,
      reservation_micros: 51_000,
      reservation_usd: 0.051,
      countries: [
        { country: "GB", numbers: 11, tasks: 2, reservation_micros: 33_000, reservation_usd: 0.033 },
        { country: "US", numbers: 6, tasks: 1, reservation_micros: 18_000, reservation_usd: 0.018 },
      ],
      not_submitted: {
        rows: 4,
        by_class: { invalid_cnt: 0, no_code_cnt: 0, other_country_cnt: 0, duplicate_cnt: 0, blank: 1, below_min_task: 3 },
        below_min_task: { min_task_size: 5, countries: [{ country: "FR", numbers: 3 }] },
      },
      preparation: { rows_read: 21, kept: 17, below_min_task: 3, blank: 1 },
    });
    // The people's plan stays on stderr, and nothing was reserved.
    expect(out.stderr).toMatch(/^Plan: 17 numbers in 3 task\(s\)/m);
    expect(e.state().tasks).toEqual([]);

    // One country, or none (carrier_batch): the same shape, one entry in countries.
    const carrier = await e.bin(["submit", crm, "--type", "carrier_batch", "--dry-run", "--json"]);
    expect(carrier.code, carrier.stderr).toBe(0);
    expect(JSON.parse(carrier.stdout)).toMatchObject({
      country: null,
      numbers: 19,
      countries: [{ country: null, numbers: 19, tasks: 3 }],
      not_submitted: { rows: 2, by_class: { no_code_cnt: 1, blank: 1 }, below_min_task: null },
    });
  });

  it("submits one task per country, classes the small country's rows below_min_task, and joins and retries the whole run", async () => {
    const { e, crm } = await mixedCountrySandbox();
    const rejects = join(e.dir, "rejects.csv");
    const submitted = await e.run(["submit", crm, ...AUTO, "--default-country", "GB", "--yes", "--json", "--rejects", rejects]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const tasks = lines(submitted.stdout)
      .map((line) => JSON.parse(line) as { type: string; id: string; preparation: Record<string, unknown> })
      .filter((object) => object.type === "task");
    expect(tasks).toHaveLength(3);
    for (const task of tasks) expect(task.preparation).toMatchObject({ rows_read: 21, kept: 17, below_min_task: 3, blank: 1 });
    const ids = tasks.map((task) => task.id);
    // One task per country, in list order, each with its own country; GB split in two balanced parts.
    const created = new Map(e.state().tasks.map((task) => [task.id, task]));
    expect(created.size).toBe(3);
    expect(ids.map((id) => [id, created.get(id)?.country, created.get(id)?.submitted_lines])).toEqual([
      [ids[0], "GB", 6],
      [ids[1], "GB", 5],
      [ids[2], "US", 6],
    ]);

    const rejected = parseDelimited(readFileSync(rejects, "utf8"));
    const belowMin = rejected.filter((row) => row[2] === "below_min_task");
    expect(belowMin.map((row) => row[1])).toEqual(FR);
    for (const row of belowMin) expect(row[3]).toBe("FR has 3 numbers to check, fewer than the minimum task size of 5");

    expect((await e.run(["wait", ...ids, "--interval", "0.2", "--quiet"])).code).toBe(0);
    const joined = await e.run(["download", ...ids, "--join", crm, "-o", "joined.csv", "--json"]);
    expect(joined.code, joined.stderr).toBe(0);
    expect(JSON.parse(joined.stdout)).toMatchObject({
      rows_written: 21,
      by_status: { below_min_task: 3, blank: 1 },
    });
    // The report's preparation table counts the country left out like every other excluded class.
    expect((await e.run(["report", ...ids, "-o", "report.html"])).code).toBe(0);
    const page = parsePage(readFileSync(join(e.dir, "report.html"), "utf8"));
    const preparation = new Map(tableRows(page, "preparation-table").map(([label, n]) => [label, numberOf(n!)]));
    expect(preparation.get("Excluded: country below the minimum task size")).toBe(3);
    expect(preparation.get("Kept")).toBe(17);
    const rows = parseDelimited(readFileSync(join(e.dir, "joined.csv"), "utf8"));
    const source = crmRows();
    // Every source row once, in list order, with what became of it.
    expect(rows.map((row) => row.slice(0, 2))).toEqual(source);
    const status = rows[0]!.indexOf("bulkcheck_status");
    const statusOf = (phone: string) => rows.find((row) => row[1] === phone)![status];
    for (const phone of FR) expect(statusOf(phone)).toBe("below_min_task");
    for (const phone of [...GB, ...US, NATIONAL_GB]) expect(["checked", "no_result"]).toContain(statusOf(phone));
    const missing = rows.filter((row) => row[status] === "no_result").length;
    expect(missing).toBeGreaterThan(0);

    // The same submit again, now that the first run has finished, is a new run: every number was answered
    // within --max-age (the numbers without a result too), so nothing is uploaded.
    const unchanged = await e.run(["submit", crm, ...AUTO, "--default-country", "GB", ...WAITING, "--join", "-o", "unchanged.csv"]);
    expect(unchanged.code, unchanged.stderr).toBe(0);
    expect(submittedIds(unchanged.stderr)).toEqual([]);
    expect(unchanged.stderr).toContain(`Not uploaded again: ${missing} numbers the service checked without a result`);
    // Asked to retry them, it uploads those numbers per country, each task filled to the minimum size with the
    // oldest fresh results; the rest come from the ledger.
    const again = await e.run([
      "submit",
      crm,
      ...AUTO,
      "--default-country",
      "GB",
      ...WAITING,
      "--retry-no-result",
      "--join",
      "-o",
      "joined.xlsx",
    ]);
    expect(again.code, again.stderr).toBe(0);
    const againIds = submittedIds(again.stderr);
    expect(againIds.filter((id) => ids.includes(id))).toEqual([]);
    const countryOfRow = (row: readonly string[]) => (row[1]!.startsWith("+1") ? "US" : "GB");
    const missingIn = (country: string) => rows.filter((row) => row[status] === "no_result" && countryOfRow(row) === country).length;
    expect([missingIn("GB"), missingIn("US")].every((n) => n > 0)).toBe(true);
    const taskOf = new Map(e.state().tasks.map((task) => [task.id, task]));
    const uploadedAgain = new Map(againIds.map((id) => [taskOf.get(id)!.country, taskOf.get(id)!.submitted_lines]));
    expect(uploadedAgain).toEqual(
      new Map([
        ["GB", Math.max(5, missingIn("GB"))],
        ["US", Math.max(5, missingIn("US"))],
      ]),
    );
    const uploaded = againIds.reduce((sum, id) => sum + taskOf.get(id)!.submitted_lines!, 0);
    const refilled = uploaded - missing;
    expect(again.stderr).toContain(`Reused from the ledger: ${17 - uploaded} numbers with results checked at`);
    expect(again.stderr).toContain(
      `Padding: ${missing} numbers need checking; the minimum task is 5, so ${refilled} of the oldest results, checked at`,
    );
    const [sheet, summary] = await readWorkbook(join(e.dir, "joined.xlsx"));
    // The join's Summary sheet counts the rows of the country left out among the rows by status.
    expect(summary!.rows).toContainEqual(["below_min_task", 3]);
    // A plain download's Summary sheet lists it with the other classes excluded before upload.
    expect((await e.run(["download", ...ids, "-o", "results.xlsx"])).code).toBe(0);
    const [, resultsSummary] = await readWorkbook(join(e.dir, "results.xlsx"));
    expect(resultsSummary!.rows).toContainEqual(["Excluded before upload: below_min_task", 3]);
    // The workbook's cells are the CSV join's values, `activated` as booleans, ...
    const activated = rows[0]!.indexOf("activated");
    const checked = rows[0]!.indexOf("bc_checked_at");
    expect(checked).toBe(rows[0]!.length - 1);
    const cells = rows.map((row, r) => row.map((value, c) => (r > 0 && c === activated && value !== "" ? value === "true" : value)));
    const withoutStatus = (row: readonly unknown[]) => row.slice(0, checked).filter((_, c) => c !== status);
    expect(sheet!.rows.map(withoutStatus)).toEqual(cells.map(withoutStatus));
    // A row whose result the ledger served is `reused`; one checked again (padding, a retry) was checked now.
    for (const [i, row] of sheet!.rows.slice(1).entries()) {
      const before = cells[i + 1]!;
      if (before[status] === "checked") expect(row[status]).toBe(row[checked] === before[checked] ? "reused" : "checked");
      else if (before[status] === "no_result") expect(["checked", "no_result"]).toContain(row[status]);
      else expect(row[status]).toBe(before[status]);
    }
    // ... and when each was checked: the first run's time, but for the fresh results checked again to fill the task.
    const checkedAt = await checkedAtByTask(e);
    const filled = againIds.filter((id) => taskOf.get(id)!.submitted_lines! > missingIn(taskOf.get(id)!.country));
    expect(filled.length).toBeGreaterThan(0);
    const changed = sheet!.rows.slice(1).filter((row, i) => row[checked] !== cells[i + 1]![checked]);
    expect(changed).toHaveLength(refilled);
    for (const row of changed) {
      expect(row[status]).toBe("checked");
      expect(filled.map((id) => checkedAt.get(id))).toContain(row[checked]);
    }
    expect(new Set(rows.slice(1).flatMap((row) => (row[checked] ? [row[checked]] : [])))).toEqual(
      new Set(ids.map((id) => checkedAt.get(id))),
    );

    // Retries go to each task's own country, and hold exactly the numbers that got no result.
    expect((await e.run(["config", "set", "min-task-size", "1"])).code).toBe(0);
    const retried = await e.run(["retry-failed", ...ids, "--yes", "--json"]);
    expect(retried.code, retried.stderr).toBe(0);
    const retries = lines(retried.stdout).map((line) => JSON.parse(line) as { id: string; country: string; total: number });
    expect(retries.reduce((sum, task) => sum + task.total, 0)).toBe(missing);
    const countryOf = new Map(e.state().tasks.map((task) => [task.id, task.country]));
    expect(new Set(retries.map((task) => countryOf.get(task.id)))).toEqual(
      new Set(rows.filter((row) => row[status] === "no_result").map((row) => (row[1]!.startsWith("+1") ? "US" : "GB"))),
    );
  });

  it("is a usage error for carrier_batch, which takes every country without --country, and --default-country needs it", async () => {
    const { e, crm } = await mixedCountrySandbox();
    const carrier = await e.run(["submit", crm, "--type", "carrier_batch", "--country", "auto", "--dry-run"]);
    expect(carrier.code).toBe(2);
    expect(carrier.stderr).toMatch(/--country auto is for the signal products: carrier_batch already takes numbers of every country/);
    const alone = await e.run(["validate", crm, "--country", "GB", "--default-country", "GB"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--default-country goes with --country auto/);
  });
});

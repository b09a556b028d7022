import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { numberOf, parsePage, tableRows } from "../helpers/html.js";
import { e2eSandboxes, gbList, lines, listText, submitAs, WAITING, type E2e } from "../helpers/sandbox.js";

/**
 * Words that mean one thing: a number that waits for a later run is not one the service
 * answered without a result, a reused result is not one checked now, and a money line
 * compares what would really be reserved.
 */
const sandbox = e2eSandboxes();
const HOUR_MS = 3_600_000;

function carrier(file: string, ...extra: string[]): string[] {
  return submitAs(file, "carrier_batch", "GB", ...extra);
}

/** The JSON objects a `submit --json` printed, by type. */
function jsonByType(stdout: string): Map<string, Record<string, unknown>> {
  return new Map(
    lines(stdout)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .map((object) => [String(object.type), object]),
  );
}

/** The joined file's rows: identifier → bulkcheck_status (a plain list's join: phone, identifier, …, status, checked_at). */
function statuses(e: E2e, name: string): Map<string, string> {
  const [header, ...rows] = lines(readFileSync(join(e.dir, name), "utf8")).map((line) => line.split(","));
  const at = header!.indexOf("bulkcheck_status");
  return new Map(rows.map((row) => [row[1]!, row[at]!]));
}

function tally(values: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

describe("waiting, no result, reused and checked now", () => {
  it("writes the numbers --pad never leaves for a later run as waiting, apart from no_result and reused, in the join, its counts, --json and the report", async () => {
    const e = await sandbox({ minTaskSize: 500, noResultRate: 0.04 });
    const first = await e.run(carrier(e.file("list.txt", listText(500)), ...WAITING, "-o", "first.csv"));
    expect(first.code, first.stderr).toBe(0);
    const [task] = e.state().tasks;
    const withResult = task!.success_cnt!;
    const without = task!.failure_cnt!;
    expect(without).toBeGreaterThan(0);
    // 30 new numbers: too few for a task, and --pad never lets them wait.
    const grown = e.file("grown.txt", listText(530));
    const out = await e.run(carrier(grown, ...WAITING, "--pad", "never", "--join", "-o", "grown.csv", "--report", "r.html", "--json"));
    expect(out.code, out.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(1);

    const rows = statuses(e, "grown.csv");
    expect(tally(rows.values())).toEqual({ reused: withResult, no_result: without, waiting: 30 });
    const newNumbers = gbList(30, 500).map((number) => number.replace(/\D/g, ""));
    expect(newNumbers.map((identifier) => rows.get(identifier))).toEqual(new Array(30).fill("waiting"));

    expect(out.stderr).toContain(`with the carrier_batch columns: reused ${withResult}, no_result ${without}, waiting 30.`);
    expect(out.stderr).toContain(
      `Checked now 0, reused from the ledger ${withResult}, no result ${without}, waiting for a later run 30. Charged $0.00; refunded $0.00.`,
    );
    const objects = jsonByType(out.stdout);
    expect(objects.get("output")).toMatchObject({
      by_status: { checked: 0, reused: withResult, no_result: without, waiting: 30 },
      checked: 0,
      reused: withResult,
      no_result: without,
      waiting: 30,
    });
    expect(objects.get("run")).toMatchObject({ uploaded: 0, reused: withResult, no_result: without, waiting: 30 });

    const numbers = new Map(
      tableRows(parsePage(readFileSync(join(e.dir, "r.html"), "utf8")), "numbers-table").map(([label, n]) => [
        label!.replace(/, checked .*$/, ""),
        numberOf(n!),
      ]),
    );
    expect(numbers.get("Reused from the ledger")).toBe(withResult);
    expect(numbers.get("Checked before without a result (within --max-age), not checked again")).toBe(without);
    expect(numbers.get("Waiting for a later run (too few for a task, and --pad never)")).toBe(30);
    expect(numbers.get("Checked now, with a result")).toBe(0);
    expect(numbers.get("Checked now, without a result")).toBe(0);

    // A merged output has no row for them, and its summary counts them apart too.
    const merged = await e.run(carrier(grown, ...WAITING, "--pad", "never", "-o", "merged.csv", "--json"));
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stderr).toContain(`Checked now 0, reused from the ledger ${withResult}, no result 0, waiting for a later run 30.`);
    expect(jsonByType(merged.stdout).get("output")).toMatchObject({ checked: 0, reused: withResult, waiting: 30 });
  });

  it("tells the rows a run reused from the rows its task checked now, in the join and its summary", async () => {
    const e = await sandbox({ minTaskSize: 500 });
    expect((await e.run(carrier(e.file("first.txt", listText(500)), ...WAITING, "-o", "first.csv"))).code).toBe(0);
    // 500 new numbers beside the 500 checked: one task of its own, and the first 500 reused.
    const out = await e.run(carrier(e.file("list.txt", listText(1000)), ...WAITING, "--join", "-o", "joined.csv"));
    expect(out.code, out.stderr).toBe(0);
    const rows = statuses(e, "joined.csv");
    expect(tally(rows.values())).toEqual({ reused: 500, checked: 500 });
    expect(gbList(500).every((number) => rows.get(number.replace(/\D/g, "")) === "reused")).toBe(true);
    expect(out.stderr).toContain("Checked now 500, reused from the ledger 500, no result 0. Charged $0.50;");
    // Joined again from its task alone: the whole run is joined, and its reused rows still say so.
    const [task] = e.state().tasks.slice(-1);
    const download = await e.run(["download", task!.id, "--join", join(e.dir, "list.txt"), "-o", "downloaded.csv"]);
    expect(download.code, download.stderr).toBe(0);
    expect(statuses(e, "downloaded.csv")).toEqual(rows);
    // The same list again: everything reused, nothing checked now, and the summary does not say "Checked 1,000".
    const again = await e.run(carrier(e.file("list.txt", listText(1000)), ...WAITING, "--join", "-o", "again.csv"));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("Checked now 0, reused from the ledger 1,000, no result 0. Charged $0.00;");
    expect(again.stderr).not.toContain("Checked 1,000");
  });
});

describe("money lines", () => {
  it("says what a longer --max-age would save as the difference of two whole plans, padding included", async () => {
    const e = await sandbox({ minTaskSize: 500 });
    // 500 numbers checked, then 500 others 6 hours later.
    expect((await e.run(carrier(e.file("old.txt", listText(500)), ...WAITING))).code).toBe(0);
    e.clock.ms += 6 * HOUR_MS;
    expect((await e.run(carrier(e.file("young.txt", listText(500, 500)), ...WAITING))).code).toBe(0);
    e.clock.ms += 7 * HOUR_MS;
    // 13 hours after the first: 108 of its numbers (older than --max-age 12h) and the 500 younger ones.
    const list = e.file("list.txt", [...gbList(108), ...gbList(500, 500)].join("\n") + "\n");
    const dry = await e.run(carrier(list, "--dry-run"));
    expect(dry.code, dry.stderr).toBe(0);
    // This plan pads the 108 with 392 fresh results to a task of 500 ($0.50); with --max-age 1d nothing is uploaded at all.
    expect(dry.stderr).toContain("reservation $0.50");
    expect(dry.stderr).toContain(
      "Not reused: 108 numbers have results checked at 2025-01-15 09:00 UTC, older than --max-age 12h; --max-age 1d would reuse them and save $0.50 (its plan reserves $0.00 instead of $0.50).",
    );
    const json = JSON.parse((await e.run(carrier(list, "--dry-run", "--json"))).stdout) as { reuse: Record<string, unknown> };
    expect(json.reuse.not_reused).toMatchObject({
      numbers: 108,
      max_age_to_reuse_seconds: 86_400,
      would_reserve_micros: 0,
      would_save_micros: 500_000,
    });
    // The suggestion holds: that --max-age uploads nothing.
    const longer = JSON.parse((await e.run(carrier(list, "--dry-run", "--json", "--max-age", "1d"))).stdout) as { numbers: number };
    expect(longer.numbers).toBe(0);
  });

  it("says a longer --max-age would save nothing when the task is padded to the minimum either way", async () => {
    const e = await sandbox({ minTaskSize: 500 });
    expect((await e.run(carrier(e.file("old.txt", listText(500)), ...WAITING))).code).toBe(0);
    e.clock.ms += 6 * HOUR_MS;
    expect((await e.run(carrier(e.file("young.txt", listText(500, 500)), ...WAITING))).code).toBe(0);
    e.clock.ms += 7 * HOUR_MS;
    // 100 old results, 100 new numbers and 500 young results: 200 to check now, or 100 with --max-age 1d, each padded to 500.
    const list = e.file("list.txt", [...gbList(100), ...gbList(100, 5000), ...gbList(500, 500)].join("\n") + "\n");
    const dry = await e.run(carrier(list, "--dry-run"));
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain("--max-age 1d would reuse them but save nothing (its plan reserves $0.50 too).");
  });

  it("no longer counts a task's reservation once status or wait has seen it finish, and says so", async () => {
    const e = await sandbox({ minTaskSize: 500, numbersPerSecond: 1 });
    const [a] = lines((await e.run(carrier(e.file("a.txt", listText(500)), "--yes", "--quiet"))).stdout);
    const [b] = lines((await e.run(carrier(e.file("b.txt", listText(500, 500)), "--yes", "--quiet"))).stdout);
    const reserved = await e.run(["balance"]);
    expect(reserved.stderr).toContain("Reserved by 2 unfinished task(s) of this store (1,000 numbers): $1.00");
    expect(reserved.stderr).toContain("bulkcheck status checks them");
    e.clock.ms += 2 * HOUR_MS;
    // status sees task a finished (it lists the store's tasks): only b is counted now.
    const status = await e.run(["status", a!]);
    expect(status.stdout).toContain("success");
    expect(JSON.parse((await e.run(["balance", "--json"])).stdout)).toMatchObject({ reserved_micros: 500_000, unfinished_tasks: 1 });
    // wait sees task b finished: nothing is counted.
    expect((await e.run(["wait", b!, "--interval", "1", "--quiet"])).code).toBe(0);
    expect(JSON.parse((await e.run(["balance", "--json"])).stdout)).toMatchObject({ reserved_micros: 0, unfinished_tasks: 0 });
    expect((await e.run(["balance"])).stderr).not.toContain("Reserved by");
  });

  it("says a list that keeps no number has nothing to check, not that its 0 numbers were checked", async () => {
    const e = await sandbox();
    const out = await e.run(carrier(e.file("none.txt", "not a number\n"), "--yes"));
    expect(out.code).toBe(3);
    expect(out.stderr).toContain("Plan: nothing to upload: the list keeps no number that can be checked.");
    expect(out.stderr).not.toContain("every one of the 0 numbers");
  });
});

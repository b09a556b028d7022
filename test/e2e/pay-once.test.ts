import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { e2eSandboxes, lines, listText, storedRuns, submitAs, WAITING, type E2e } from "../helpers/sandbox.js";

/**
 * "Within --max-age, a number is paid for at most once": a number with a result, one the
 * service checked without a result, and one in a task still processing all count as
 * checked. Against a sandbox as the real service behaves: a minimum task of 500, some
 * numbers without a result, results that drift between checks.
 */
const sandbox = e2eSandboxes();
const AS_THE_SERVICE = { minTaskSize: 500, noResultRate: 0.04, drift: 0.1 } as const;
const DAY_MS = 86_400_000;

function carrier(file: string, ...extra: string[]): string[] {
  return submitAs(file, "carrier_batch", "GB", ...extra);
}

const reservations = (e: E2e) => e.state().ledger.filter((entry) => entry.kind === "reserve");
const charged = (e: E2e) => e.state().ledger.reduce((sum, entry) => sum + (entry.kind === "charge" ? entry.micros : 0), 0);
const sortedRows = (e: E2e, name: string) => lines(readFileSync(join(e.dir, name), "utf8")).sort();
/** A second machine: its own config and state directory, the same service and store. */
const machine = (storeUrl: string) => ({ BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-machine-"), BULKCHECK_STORE_URL: storeUrl });

describe("a re-run never pays twice", () => {
  it("charges nothing for a same-day re-run, a nightly unchanged list with --max-age 7d, or numbers that got no result", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    const list = e.file("list.txt", listText(1000));
    const first = await e.run(carrier(list, ...WAITING, "-o", "first.csv"));
    expect(first.code, first.stderr).toBe(0);
    const [task] = e.state().tasks;
    expect(task!.failure_cnt).toBeGreaterThan(0);
    const paid = charged(e);
    // The same day (default --max-age 12h): the answers, "no result" included, are fresh.
    const sameDay = await e.run(carrier(list, ...WAITING, "-o", "same-day.csv"));
    expect(sameDay.code, sameDay.stderr).toBe(0);
    expect(sameDay.stderr).toContain(`Not uploaded again: ${task!.failure_cnt} numbers the service checked without a result`);
    expect(sortedRows(e, "same-day.csv")).toHaveLength(task!.success_cnt! + 1);
    // The next nights, the cron line's --max-age 7d.
    for (const night of [1, 2, 6]) {
      e.clock.ms += DAY_MS;
      const nightly = await e.run(carrier(list, ...WAITING, "--max-age", "7d", "-o", `night-${night}.csv`, "--json"));
      expect(nightly.code, nightly.stderr).toBe(0);
      const run = lines(nightly.stdout)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((object) => object.type === "run");
      expect(run).toMatchObject({ uploaded: 0, padded: 0, reused: task!.success_cnt, no_result: task!.failure_cnt });
    }
    expect(e.state().tasks).toHaveLength(1);
    expect(reservations(e)).toHaveLength(1);
    expect(charged(e)).toBe(paid);
  });

  it("pads a task only when numbers need a result, shows the padding and its cost first, and lets them wait with --pad never", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    const list = e.file("list.txt", listText(1000));
    expect((await e.run(carrier(list, ...WAITING, "-o", "first.csv"))).code).toBe(0);
    const grown = e.file("grown.txt", listText(1030));
    const plan = await e.run(carrier(grown, "--dry-run", "--json"));
    const reuse = (JSON.parse(plan.stdout) as { reuse: Record<string, unknown> }).reuse;
    expect(reuse).toMatchObject({ padded: { numbers: 470, cost_micros: 470_000 }, waiting: 0 });
    expect(plan.stderr).toContain("Padding: 30 numbers need checking; the minimum task is 500, so 470 of the oldest results");
    // The question before money is reserved names it too.
    const asked = await e.run(carrier(grown), { tty: true, stdin: "n\n" });
    expect(asked.code).toBe(130);
    expect(asked.stderr).toContain("Reserve $0.50 ($0.47 of it padding to the minimum task size) of $");
    // --max-cost counts the padding.
    expect((await e.run(carrier(grown, "--yes", "--max-cost", "0.10"))).code).toBe(5);
    const waits = await e.run(carrier(grown, ...WAITING, "--pad", "never", "-o", "grown.csv"));
    expect(waits.code, waits.stderr).toBe(0);
    expect(waits.stderr).toContain("30 numbers that need a result wait for a later run");
    expect(e.state().tasks).toHaveLength(1);
    // The setting does the same for every run of the profile.
    expect((await e.run(["config", "set", "pad", "never"])).code).toBe(0);
    const bySetting = await e.run(carrier(grown, "--yes"));
    expect(bySetting.stderr).toContain("--pad never lets them wait");
    // Those 30 were not checked: the run says the other numbers were, not every one.
    expect(bySetting.stderr).not.toContain("Every number was checked");
    expect(bySetting.stderr).toContain("No task was needed for the other numbers: each was checked within --max-age.");
    expect(e.state().tasks).toHaveLength(1);
    // Padding allowed again, the run's --json tells what it padded and what that reserved.
    expect((await e.run(["config", "set", "pad", "oldest"])).code).toBe(0);
    const padded = await e.run(carrier(grown, "--yes", "--json"));
    const run = lines(padded.stdout)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((object) => object.type === "run");
    expect(run).toMatchObject({ uploaded: 500, padded: 470, padded_micros: 470_000, reservation_micros: 500_000 });
    expect(e.state().tasks).toHaveLength(2);
  });

  it("uploads the numbers without a result only when asked (--retry-no-result)", async () => {
    const e = await sandbox({ ...AS_THE_SERVICE, minTaskSize: 1 });
    expect((await e.run(["config", "set", "min-task-size", "1"])).code).toBe(0);
    const list = e.file("list.txt", listText(1000));
    expect((await e.run(carrier(list, ...WAITING, "-o", "first.csv"))).code).toBe(0);
    const missed = e.state().tasks[0]!.failure_cnt!;
    const retried = await e.run(carrier(list, ...WAITING, "--retry-no-result", "-o", "retried.csv"));
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stderr).toContain(`Retried on request (--retry-no-result): ${missed} numbers without a result.`);
    expect(e.state().tasks.map((task) => task.submitted_lines)).toEqual([1000, missed]);
  });

  it("waits with --wait for another run's task in flight and writes every row from its result: one task, one reservation", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    const list = e.file("list.txt", listText(1000));
    const first = await e.run(carrier(list, "--yes"));
    expect(first.code, first.stderr).toBe(0);
    // No --yes: a run with nothing of its own to upload reserves nothing, so it asks nothing.
    const taken = await e.run(carrier(list, "--wait", "--interval", "0.2", "-o", "out.csv"));
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stderr).toContain(
      `In flight: 1,000 numbers are in task(s) submitted by another run and still processing (${first.stdout.trim()})`,
    );
    const [task] = e.state().tasks;
    expect(e.state().tasks).toHaveLength(1);
    expect(reservations(e)).toHaveLength(1);
    expect(sortedRows(e, "out.csv")).toHaveLength(task!.success_cnt! + 1);
  });

  it("takes a task in flight that then fails as no answer: exit 6 naming it, and the next run uploads its numbers", async () => {
    const e = await sandbox({ ...AS_THE_SERVICE, failRate: 1 });
    const list = e.file("list.txt", listText(500));
    const first = await e.run(carrier(list, "--yes"));
    expect(first.code, first.stderr).toBe(0);
    const taken = await e.run(carrier(list, ...WAITING, "-o", "out.csv"));
    expect(taken.code).toBe(6);
    expect(taken.stderr).toContain(`${first.stdout.trim()}, submitted by another run with numbers of this list, failed`);
    expect(e.state().tasks).toHaveLength(1);
    const next = await e.run(carrier(list, "--yes"));
    expect(next.code, next.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(2);
    expect((await storedRuns(e)).map((run) => run.state)).toEqual(["finished", "failed", "finished"]);
  });

  it("ends a run whose output cannot be written as failed, with the reason, and the next run writes it without paying", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    const list = e.file("list.txt", listText(500));
    const outDir = join(e.dir, "out");
    mkdirSync(outDir);
    // The output's directory goes away while the task processes (the first wait), so only the final write fails.
    let removed = false;
    const sleep = async (ms: number) => {
      if (!removed) rmSync(outDir, { recursive: true });
      removed = true;
      e.clock.ms += ms;
      await new Promise((resolve) => setImmediate(resolve));
    };
    const lost = await e.run(carrier(list, ...WAITING, "-o", join(outDir, "out.csv")), { sleep });
    expect(lost.code).not.toBe(0);
    const [run] = await storedRuns(e);
    expect(run).toMatchObject({ state: "failed" });
    expect(run!.note).toContain(outDir);
    mkdirSync(outDir);
    const again = await e.run(carrier(list, ...WAITING, "-o", join(outDir, "out.csv")));
    expect(again.code, again.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(1);
    expect((await storedRuns(e)).map((each) => each.state)).toEqual(["failed", "finished"]);
  });
});

describe("the same command twice at once", () => {
  /**
   * Two processes of one command `gapMs` apart (0.3 s unless given), on a list of 1,000 numbers from
   * `offset`; `envs` gives each its own environment (machines), or none (one state directory).
   */
  async function twice(
    e: E2e,
    outputs: [string, string],
    {
      envs = [{}, {}],
      offset = 0,
      extra = [],
      gapMs = 300,
    }: { envs?: Array<Record<string, string>>; offset?: number; extra?: string[]; gapMs?: number } = {},
  ) {
    const list = e.file(`list-${offset}.txt`, listText(1000, offset));
    // --verbose logs each request, so a test can tell that none followed the wait.
    const first = e.spawn(carrier(list, ...WAITING, "--verbose", ...extra, "-o", outputs[0]), { env: envs[0]! });
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    const second = e.spawn(carrier(list, ...WAITING, "--verbose", ...extra, "-o", outputs[1]), { env: envs[1]! });
    return Promise.all([first.done, second.done]);
  }

  /** What a process that waited for the other run of its command requested after the wait (--verbose's request lines). */
  const requestsAfterWait = (stderr: string) =>
    stderr
      .slice(stderr.indexOf("waiting for it to let go"))
      .split("\n")
      .filter((line) => /^(GET|POST|PUT|DELETE) \//.test(line));

  /** The two processes' ends, the one that exited 0 first. */
  const sortedByExitCode = <T extends { code: number | null }>([x, y]: [T, T]): [T, T] =>
    (x.code ?? 99) <= (y.code ?? 99) ? [x, y] : [y, x];

  it("on one machine: one task, the list charged once, and both outputs whole", async () => {
    const e = await sandbox({ ...AS_THE_SERVICE, fakeClock: false, numbersPerSecond: 500 });
    const [a, b] = await twice(e, ["A.csv", "B.csv"]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const [task] = e.state().tasks;
    expect(e.state().tasks).toHaveLength(1);
    expect(reservations(e)).toHaveLength(1);
    expect(charged(e)).toBe(task!.success_cnt! * 1000);
    const rows = sortedRows(e, "A.csv");
    expect(rows).toHaveLength(task!.success_cnt! + 1);
    expect(sortedRows(e, "B.csv")).toEqual(rows);
  }, 60_000);

  it("started in the same instant: the one that waits prints its plan only once it has the run, never a plan it does not make", async () => {
    const e = await sandbox({ ...AS_THE_SERVICE, fakeClock: false, numbersPerSecond: 500 });
    for (const offset of [0, 2000]) {
      const [a, b] = await twice(e, ["A.csv", "B.csv"], { offset, extra: ["--force"], gapMs: 0 });
      for (const { code, stderr } of [a, b]) {
        expect(code, stderr).toBe(0);
        expect(stderr.match(/^Plan: /gm), stderr).toHaveLength(1);
      }
    }
    expect(e.state().tasks).toHaveLength(2);
  }, 90_000);

  it("with --max-age 0 on a list checked before: one new task, and the second takes its results, not the old ones", async () => {
    const e = await sandbox({ ...AS_THE_SERVICE, fakeClock: false, numbersPerSecond: 500 });
    const before = await e.run(carrier(e.file("list-0.txt", listText(1000)), ...WAITING, "-o", "before.csv"));
    expect(before.code, before.stderr).toBe(0);
    const [a, b] = await twice(e, ["A.csv", "B.csv"], { extra: ["--max-age", "0"] });
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const tasks = e.state().tasks;
    expect(tasks).toHaveLength(2);
    expect(reservations(e)).toHaveLength(2);
    expect(charged(e)).toBe((tasks[0]!.success_cnt! + tasks[1]!.success_cnt!) * 1000);
    // Both outputs are the new task's results (its checked_at), not the first run's.
    expect(sortedRows(e, "B.csv")).toEqual(sortedRows(e, "A.csv"));
    expect(sortedRows(e, "A.csv")).toHaveLength(tasks[1]!.success_cnt! + 1);
    expect(sortedRows(e, "A.csv")).not.toEqual(sortedRows(e, "before.csv"));
  }, 60_000);

  it("with the same -o: the second says the first wrote it, before any request, and leaves no run open", async () => {
    const e = await sandbox({ ...AS_THE_SERVICE, fakeClock: false, numbersPerSecond: 500 });
    // Which of the two holds the run first is the machine's to decide (on a busy one the later may plan first).
    const [first, second] = sortedByExitCode(await twice(e, ["same.csv", "same.csv"]));
    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain("It was written while this command waited for the other run of it");
    expect(first.stderr).toMatch(/^POST \//m);
    expect(second.stderr).toContain("waiting for it to let go");
    expect(requestsAfterWait(second.stderr)).toEqual([]);
    expect(e.state().tasks).toHaveLength(1);
    expect(reservations(e)).toHaveLength(1);
    expect((await storedRuns(e)).map((run) => run.state)).toEqual(["finished"]);
  }, 60_000);

  it("on two machines sharing PostgreSQL, with the same or different -o: one task, charged once", async () => {
    const e = await sandbox({ ...AS_THE_SERVICE, fakeClock: false, numbersPerSecond: 500 });
    const storeUrl = await createTestDatabase();
    const [a, b] = await twice(e, ["A.csv", "B.csv"], { envs: [machine(storeUrl), machine(storeUrl)] });
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const [task] = e.state().tasks;
    expect(sortedRows(e, "A.csv")).toHaveLength(task!.success_cnt! + 1);
    expect(sortedRows(e, "B.csv")).toEqual(sortedRows(e, "A.csv"));
    // Another list, so that the first of the two buys a task and the second waits for it (the same list would be served whole from the ledger).
    const [c, d] = sortedByExitCode(await twice(e, ["C.csv", "C.csv"], { envs: [machine(storeUrl), machine(storeUrl)], offset: 5000 }));
    expect([c.code, d.code]).toEqual([0, 2]);
    expect(d.stderr).toContain("It was written while this command waited for the other run of it");
    expect(requestsAfterWait(d.stderr)).toEqual([]);
    const tasks = e.state().tasks;
    expect(tasks).toHaveLength(2);
    expect(reservations(e)).toHaveLength(2);
    expect(sortedRows(e, "C.csv")).toHaveLength(tasks[1]!.success_cnt! + 1);
    expect(charged(e)).toBe((task!.success_cnt! + tasks[1]!.success_cnt!) * 1000);
    const open = await e.bin(["runs", "--state", "open", "--json"], { env: machine(storeUrl) });
    expect(JSON.parse(open.stdout)).toMatchObject({ runs: [] });
  }, 90_000);
});

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkBigLists, formatBigListFigures, type BigList } from "../../bench/soak-big-list-checks.js";
import { runBigListSoak } from "../../bench/soak-big-list.js";
import { checkSoak, exit7Reason, formatFigures, sameResults, type SoakList } from "../../bench/soak-checks.js";
import { checkDripRuns } from "../../bench/soak-drip.js";
import { runSoak } from "../../bench/soak.js";
import { tempDir } from "../helpers/cli.js";
import { e2eSandboxes, listText, submitArgs } from "../helpers/sandbox.js";

/**
 * The short version of `npm run soak` (bench/soak.js): real bulkcheck processes
 * (bin/bulkcheck.js → dist, built by `npm test`) through 30% injected faults.
 */
const sandbox = e2eSandboxes();

describe("the soak under faults", () => {
  // The two runs wait on processes and sandboxes most of the time: side by side they take the time of the longer.
  it.concurrent(
    "runs full flows through 30% faults with no duplicate task, the exact balance and outputs identical to a fault-free run",
    async () => {
      const report = await runSoak({ flows: 16, parallel: 8, seeds: 2, firstSeed: 41, repeatEvery: 4 });
      console.info(`soak (short):\n${formatFigures(report.figures, report.wallMs)}`);
      expect(report.failures).toEqual([]);
      const { figures } = report;
      expect(figures.flows).toBe(16);
      expect(figures.lists).toBeLessThan(16); // some flows re-ran a list
      expect(figures.duplicates).toBe(0);
      expect(figures.corrupt_outputs).toBe(0);
      expect(figures.missing_outputs).toBe(0);
      expect(figures.faults_total).toBeGreaterThan(0);
      expect(figures.retries).toBeGreaterThan(0);
      expect(Object.keys(figures.exit_codes).every((code) => code === "0" || code === "7")).toBe(true);
    },
    150_000,
  );

  it.concurrent(
    "runs lists bigger than the quota of unfinished tasks through 30% faults, killed at random moments and run again, with no duplicate task, no number charged twice and every output whole",
    async () => {
      const started = Date.now();
      const report = await runBigListSoak({ lists: 2, parts: 5, maxKills: 1, parallel: 2, firstSeed: 7 });
      console.info(`soak (big lists, short):\n${formatBigListFigures(report.figures, Date.now() - started)}`);
      expect(report.failures).toEqual([]);
      expect(report.figures).toMatchObject({
        tasks: 10,
        parts: 10,
        duplicate_tasks: 0,
        numbers_charged_twice: 0,
        partial_or_corrupt_outputs: 0,
      });
      expect(report.figures.final_exit_codes).toEqual({ 0: 2 });
    },
    150_000,
  );
});

describe("the soak's invariant checks", () => {
  it("report a duplicate task, a wrong balance, a corrupt output, a leaked key (in the output and in the store) and an exit code other than 0 or 7", () => {
    const dir = tempDir("bulkcheck-soak-check-");
    const list: SoakList = {
      seed: 1,
      name: "list0",
      product: "number_validation_batch",
      size: 500,
      reference: { code: 0, bytes: Buffer.from("identifier,activated\n") },
    };
    writeFileSync(join(dir, "flow0.csv"), "identifier,activ");
    writeFileSync(join(dir, "bulkcheck.db"), "SQLite format 3\0 ... sk_secret_key ...");
    const task = (id: string) => ({ id, product: "number_validation_batch", submitted_lines: 500, status: "success", success_cnt: 490 });
    const { failures, figures } = checkSoak({
      lists: [list],
      flows: [
        { index: 0, list, output: join(dir, "flow0.csv"), runs: [{ code: 0, stdout: "a\n", stderr: "using key sk_secret_key" }] },
        { index: 1, list, output: join(dir, "flow1.csv"), runs: [{ code: 1, stdout: "", stderr: "error: unexpected: boom" }] },
      ],
      sandboxes: [
        {
          seed: 1,
          state: {
            tasks: [task("a"), task("b")],
            ledger: [{ kind: "reserve" }, { kind: "reserve" }],
            prices: { number_validation_batch: 1000 },
            start_balance_micros: 10_000_000,
            balance_micros: 10_000_000,
            reserved_micros: 0,
            stats: { faults_injected: { "42901": 2 } },
          },
        },
      ],
      journals: [{ seed: 1, path: join(dir, "bulkcheck.db") }],
      secret: "sk_secret_key",
    });
    expect(figures).toMatchObject({ duplicates: 1, corrupt_outputs: 1, key_leaks: 2, exit_codes: { 0: 1, 1: 1 } });
    const text = failures.join("\n");
    expect(text).toContain("exited 1");
    expect(text).toContain("2 tasks for one list");
    expect(text).toContain("balance 10000000 micros, expected 9020000");
    expect(text).toContain("differs from the fault-free run");
    expect(text).toContain("printed the API key");
    expect(text).toContain("the store holds the API key");
  });
});

describe("the soak's comparison of outputs", () => {
  const output = (...lines: string[]) => Buffer.from(lines.join("\n") + "\n");
  it("takes the same results checked at other times, or from the ledger in another order, as the same", () => {
    const reference = output("identifier,activated,checked_at", "441,true,2026-01-01T00:00:00.000Z", "442,false,2026-01-01T00:00:00.000Z");
    expect(
      sameResults(
        output("identifier,activated,checked_at", "442,false,2026-02-01T00:00:00Z", "441,true,2026-01-05T00:00:00.000Z"),
        reference,
      ),
    ).toBe(true);
  });
  it("tells a changed value, a missing row and a checked_at that is not a time", () => {
    const reference = output("identifier,activated,checked_at", "441,true,2026-01-01T00:00:00.000Z", "442,false,2026-01-01T00:00:00.000Z");
    expect(
      sameResults(
        output("identifier,activated,checked_at", "441,true,2026-01-01T00:00:00.000Z", "442,true,2026-01-01T00:00:00.000Z"),
        reference,
      ),
    ).toBe(false);
    expect(sameResults(output("identifier,activated,checked_at", "441,true,2026-01-01T00:00:00.000Z"), reference)).toBe(false);
    expect(sameResults(output("identifier,activated,checked_at", "441,true,soon", "442,false,2026-01-01T00:00:00.000Z"), reference)).toBe(
      false,
    );
  });
});

describe("the big-list soak's checks", () => {
  const ledger = (charged: number) => ({
    tasks: [{ id: "a" }, { id: "b" }, { id: "c" }],
    ledger: [
      { kind: "reserve", micros: 1 },
      { kind: "reserve", micros: 1 },
      { kind: "reserve", micros: 1 },
      { kind: "charge", micros: charged * 1000 },
    ],
    prices: { number_validation_batch: 1000 },
    stats: { faults_injected: { drop: 2 } },
  });
  const run = (code: number, left: string | undefined, more: Partial<BigList["runs"][number]> = {}) => ({
    code,
    stdout: "",
    stderr: code === 1 ? "error: unexpected: boom\n" : "",
    wallMs: 1_000,
    killed: false,
    left: left === undefined ? undefined : Buffer.from(left),
    ...more,
  });

  it("report a duplicate task, a number charged twice, a partial output, a run past its timeout, an unexpected exit and staging left behind", () => {
    const list: BigList = {
      name: "list-0",
      product: "number_validation_batch",
      parts: 2,
      referenceRun: { code: 0, stderr: "", bytes: Buffer.from("identifier,activated\n1,true\n") },
      state: ledger(3),
      referenceState: { ...ledger(2), tasks: [{ id: "x" }, { id: "y" }] },
      runs: [
        run(137, "identifier,activ", { killed: true }),
        run(1, undefined),
        run(0, "identifier,activated\n1,true\n", { wallMs: 70_000 }),
      ],
      stagingLeft: ["0123abcd"],
    };
    const { failures, figures } = checkBigLists({ lists: [list], timeoutSeconds: 60, secret: "sk_secret" });
    expect(figures).toMatchObject({
      duplicate_tasks: 1,
      numbers_charged_twice: 1,
      partial_or_corrupt_outputs: 1,
      hung_runs: 1,
      killed_runs: 1,
      staging_left: 1,
    });
    for (const failure of [
      "3 tasks for 2 parts",
      "1 numbers charged more than in the fault-free run",
      "after run 1 (killed) the output differs",
      "run 3 took 70 s, past its --timeout 60",
      "run 2 exited 1: error: unexpected: boom",
      "staging left behind after success",
    ])
      expect(failures.join("\n")).toContain(failure);
  });
});

describe("the dripping-server soak's checks", () => {
  it("report a run that ended past --timeout + 5 s, one the soak had to kill, and one that refused --timeout", () => {
    const base = { stdout: "", stderr: "" };
    const { failures, figures } = checkDripRuns(
      [
        { ...base, command: "status", code: 8, wallMs: 4_000 },
        { ...base, command: "wait", code: 8, wallMs: 9_000 },
        { ...base, command: "balance", code: 128, signal: "SIGKILL", wallMs: 63_000 },
        { ...base, command: "download", code: 2, stderr: "error: unknown option '--timeout'\n", wallMs: 500 },
      ],
      3,
    );
    expect(figures).toMatchObject({ runs: 4, runs_past_bound: 2, longest_run_s: 63, max_overrun_s: 60 });
    expect(failures).toEqual([
      "run 2 (wait) took 9.0 s with --timeout 3",
      "run 3 (balance) was still running after 63 s (killed) with --timeout 3",
      "run 4 (download) exited 2: error: unknown option '--timeout'",
    ]);
  });
});

describe("why a run exited 7", () => {
  it("names exhausted retries when the service stays at capacity", async () => {
    const e = await sandbox();
    e.sandbox.scriptFaults([{ route: "submit", fault: "42901", times: 50 }]);
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--yes"));
    expect(out.code).toBe(7);
    expect(exit7Reason(out.stderr)).toBe("retries exhausted (attempt limit)");
  });

  it("names 50300 maintenance, which is never retried", async () => {
    const e = await sandbox();
    e.sandbox.scriptFaults([{ route: "submit", fault: "50300" }]);
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--yes", "--verbose"));
    expect(out.code).toBe(7);
    expect(out.stderr).not.toMatch(/^retry:/m);
    expect(exit7Reason(out.stderr)).toBe("50300 maintenance (never retried)");
    expect(e.state().tasks).toEqual([]);
  });

  it("names a download that broke off on every transfer attempt", async () => {
    const e = await sandbox();
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--yes", "--quiet"))).stdout.trim();
    expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
    e.sandbox.scriptFaults([{ route: "result", fault: "drop-mid-download", times: 3 }]);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(7);
    expect(exit7Reason(out.stderr)).toBe("download broke off on every transfer attempt");
  });

  it("names a 42900 when none of the list's own tasks is unfinished to wait for", async () => {
    const e = await sandbox({ maxUnfinished: 1, numbersPerSecond: 1 });
    expect((await e.run(submitArgs(e.file("other.txt", listText(500)), "--yes", "--quiet"))).code).toBe(0);
    const out = await e.run(submitArgs(e.file("list.txt", listText(500, 1000)), "--yes"));
    expect(out.code).toBe(7);
    expect(exit7Reason(out.stderr)).toBe("42900 with none of the list's own tasks unfinished");
  });

  it("calls anything else unexplained", () => {
    expect(exit7Reason("error: something new\n")).toBe("unexplained");
  });
});

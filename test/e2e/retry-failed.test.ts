import { createHash } from "node:crypto";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatUsd } from "../../src/tasks/cost.js";
import { allowSmallTasks, expectedResult, parseDelimited, recordingProxy, type RecordingProxy } from "../helpers/results-fixtures.js";
import {
  e2eSandboxes,
  gbList,
  identifier,
  lines,
  storedRuns,
  storedTasks,
  submitArgs,
  TASK_ID,
  type E2e,
  type E2eOptions,
} from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();
const PRODUCT = "number_validation_batch";
const NO_RESULT_RATE = 0.3;

const proxies: RecordingProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

interface Setup {
  e: E2e;
  proxy: RecordingProxy;
  /** Runs bulkcheck through the recording proxy. */
  run(argv: string[]): ReturnType<E2e["run"]>;
}

/** A sandbox for small tasks behind a proxy that records every uploaded list. */
async function setup(options: E2eOptions & { maxTaskSize?: number } = {}): Promise<Setup> {
  const e = await sandbox({ minTaskSize: 1, noResultRate: NO_RESULT_RATE, ...options });
  await allowSmallTasks(e, options.maxTaskSize);
  const proxy = await recordingProxy(e.sandbox.url);
  proxies.push(proxy);
  return { e, proxy, run: (argv) => e.run(argv, { env: { BULKCHECK_BASE_URL: proxy.url } }) };
}

/** A CRM export: header, every third number in national format, a repeated number, a blank phone. */
function crmCsv(count: number, offset = 0): string {
  const numbers = gbList(count, offset);
  const rows = numbers.map((number, i) => `${i + 1},"Customer ${i}, Ltd",${i % 3 === 0 ? "0" + number.slice(4) : number}`);
  return ["id,name,phone", ...rows, `${count + 1},Repeat,${numbers[0]}`, `${count + 2},No phone,`].join("\r\n") + "\r\n";
}

const uploadLines = (upload: string | undefined): string[] => lines(upload ?? "");
const withoutResult = (ids: readonly string[]): string[] => ids.filter((id) => expectedResult(PRODUCT, id, NO_RESULT_RATE) === undefined);

async function submitAndWait(s: Setup, file: string): Promise<string[]> {
  const out = await s.run(submitArgs(file, "--yes", "--quiet"));
  expect(out.code, out.stderr).toBe(0);
  const ids = lines(out.stdout);
  expect((await s.run(["wait", ...ids, "--interval", "0.2", "--quiet"])).code).toBe(0);
  return ids;
}

describe("bulkcheck retry-failed", () => {
  it("submits a new task with exactly the numbers that got no result, after saying how many and the cost", async () => {
    const s = await setup();
    const file = s.e.file("crm.csv", crmCsv(30));
    const [id] = await submitAndWait(s, file);
    const uploaded = uploadLines(s.proxy.uploads[0]);
    expect(uploaded).toEqual(gbList(30).map(identifier));
    // Cross-check the oracle with the result file itself.
    const plain = await s.run(["download", id!]);
    const resolved = new Set(
      parseDelimited(plain.stdout)
        .slice(1)
        .map((row) => row[0]),
    );
    const missing = uploaded.filter((number) => !resolved.has(number));
    expect(missing).toEqual(withoutResult(uploaded));
    expect(missing.length).toBeGreaterThan(0);

    const out = await s.run(["retry-failed", id!, "--yes"]);
    expect(out.code, out.stderr).toBe(0);
    const retryId = out.stdout.trim();
    expect(retryId).toMatch(TASK_ID);
    expect(retryId).not.toBe(id);
    expect(out.stderr).toContain(`${missing.length} of ${uploaded.length} numbers of task ${id} got no result.`);
    expect(out.stderr).toContain(
      `Plan: ${missing.length} numbers in 1 task(s) of ${PRODUCT} for GB; reservation ${formatUsd(missing.length * 1000)} at $0.001 per number`,
    );
    expect(s.proxy.uploads).toHaveLength(2);
    expect(uploadLines(s.proxy.uploads[1])).toEqual(missing);
    const task = s.e.state().tasks.find((t) => t.id === retryId)!;
    expect(task).toMatchObject({ product: PRODUCT, country: "GB", submitted_lines: missing.length });
    expect(
      s.e
        .state()
        .ledger.filter((entry) => entry.task_id === retryId && entry.kind === "reserve")
        .map((entry) => entry.micros),
    ).toEqual([missing.length * 1000]);
  });

  it("shows the count and cost with --dry-run and uploads nothing", async () => {
    const s = await setup();
    const [id] = await submitAndWait(s, s.e.file("crm.csv", crmCsv(30)));
    const missing = withoutResult(uploadLines(s.proxy.uploads[0]));
    const submitsBefore = s.e.state().stats.by_route.submit;
    const out = await s.run(["retry-failed", id!, "--dry-run"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`${missing.length} of 30 numbers of task ${id} got no result.`);
    expect(out.stderr).toContain(`Plan: ${missing.length} numbers in 1 task(s)`);
    expect(out.stderr).toContain("Dry run: nothing was uploaded.");
    expect(s.proxy.uploads).toHaveLength(1);
    expect(s.e.state().stats.by_route.submit).toBe(submitsBefore);
    expect(s.e.state().tasks).toHaveLength(1);
  });

  it("carries an unfinished retry on with the same task, reserving nothing more, and makes a new one once it finished", async () => {
    const s = await setup({ numbersPerSecond: 1 });
    const [id] = await submitAndWait(s, s.e.file("crm.csv", crmCsv(30)));
    const reserves = () => s.e.state().ledger.filter((entry) => entry.kind === "reserve").length;
    // Timed out before the retry task finished: its run stays open, and the same command carries it on.
    const unfinished = ["retry-failed", id!, "--yes", "--wait", "--interval", "1", "--timeout", "1"];
    const first = await s.run(unfinished);
    expect(first.code, first.stderr).toBe(8);
    expect(first.stdout.trim()).toMatch(TASK_ID);
    const reserved = reserves();
    const again = await s.run(unfinished);
    expect(again.code, again.stderr).toBe(8);
    expect(again.stderr).toContain("Carrying on run");
    expect(again.stdout).toBe(first.stdout);
    expect(s.e.state().tasks).toHaveLength(2);
    expect(reserves()).toBe(reserved);
    expect(s.proxy.uploads).toHaveLength(2);
    // Waited for to the end, the retry's run finishes with that one task.
    const finished = await s.run(["retry-failed", id!, "--yes", "--wait", "--interval", "1"]);
    expect(finished.code, finished.stderr).toBe(0);
    // The retry's task is reported once, as the run saw it finish.
    expect(finished.stderr.match(/ success: /g)).toHaveLength(1);
    expect(s.e.state().tasks).toHaveLength(2);
    // Asked again after that, the numbers without a result are retried again: a new run and a new task with the same numbers.
    const next = await s.run(["retry-failed", id!, "--yes"]);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout.trim()).toMatch(TASK_ID);
    expect(next.stdout).not.toBe(first.stdout);
    expect(s.e.state().tasks).toHaveLength(3);
    expect(reserves()).toBe(reserved + 1);
    expect(uploadLines(s.proxy.uploads[2])).toEqual(uploadLines(s.proxy.uploads[1]));
  });

  it("refuses with a clear error when the source's numbers changed since the task was submitted", async () => {
    const s = await setup();
    const file = s.e.file("crm.csv", crmCsv(30));
    const [id] = await submitAndWait(s, file);
    appendFileSync(file, "99,Late addition,+44 7400 999999\r\n");
    const out = await s.run(["retry-failed", id!, "--yes"]);
    expect(out.code).toBe(3);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`error: ${file} has changed since task ${id} was submitted, so its numbers cannot be recomputed.`);
    expect(out.stderr).toContain("Restore the original file");
    expect(s.proxy.uploads).toHaveLength(1);
  });

  it("retries one task of a list that was split into several, with that task's missing numbers only", async () => {
    const s = await setup({ maxTaskSize: 12 });
    const ids = await submitAndWait(s, s.e.file("crm.csv", crmCsv(30)));
    expect(ids).toHaveLength(3);
    // Which upload became which task: the store keeps each part's hash and its task id.
    const uploadOf = new Map<unknown, string>();
    for (const task of await storedTasks(s.e)) {
      const upload = s.proxy.uploads.find((text) => createHash("sha256").update(text).digest("hex") === task.sha256);
      uploadOf.set(task.taskId, upload!);
    }
    const middle = ids[1]!;
    const missing = withoutResult(uploadLines(uploadOf.get(middle)));
    expect(missing.length).toBeGreaterThan(0);
    const out = await s.run(["retry-failed", middle, "--yes"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain(`${missing.length} of 10 numbers of task ${middle} got no result.`);
    expect(uploadLines(s.proxy.uploads[3])).toEqual(missing);
  });

  it("retries every number of a task that failed", async () => {
    const s = await setup({ failRate: 1 });
    const file = s.e.file("crm.csv", crmCsv(20));
    const out = await s.run(submitArgs(file, "--yes", "--quiet"));
    const id = out.stdout.trim();
    expect((await s.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(6);
    // --resubmit, now accepted and ignored: the numbers are those of the failed task itself.
    const retry = await s.run(["retry-failed", id, "--yes", "--resubmit"]);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stderr).toContain(`20 of 20 numbers of task ${id} got no result.`);
    expect(uploadLines(s.proxy.uploads[1])).toEqual(uploadLines(s.proxy.uploads[0]));
  });

  it("says plainly that the service's minimum task size prevents retrying a few numbers, and what can be done instead", async () => {
    const s = await setup();
    expect((await s.run(["config", "set", "min-task-size", "25"])).code).toBe(0);
    const file = s.e.file("crm.csv", crmCsv(30));
    const [id] = await submitAndWait(s, file);
    const missing = withoutResult(uploadLines(s.proxy.uploads[0]));
    expect(missing.length).toBeGreaterThan(0);
    expect(missing.length).toBeLessThan(25);
    const out = await s.e.bin(["retry-failed", id!, "--yes"], { env: { BULKCHECK_BASE_URL: s.proxy.url } });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain(
      `The ${missing.length} numbers of task ${id} that got no result cannot be retried on their own: the service's minimum task size is 25 numbers, so nothing was uploaded.`,
    );
    expect(out.stderr).toContain(`Keep them for the next run: they are still in ${file}`);
    expect(out.stderr).not.toContain("Add numbers");
    // The column is the one the list was submitted with, not a --column nobody gave.
    expect(out.stderr).toContain('Reading phone numbers from column 3 "phone" (the column the list was submitted with).');
    expect(out.stderr).not.toContain("--column");
    expect(s.proxy.uploads).toHaveLength(1);
  });

  it("submits nothing when every number got a result", async () => {
    const s = await setup({ noResultRate: 0 });
    const [id] = await submitAndWait(s, s.e.file("crm.csv", crmCsv(20)));
    const out = await s.run(["retry-failed", id!, "--yes"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`0 of 20 numbers of task ${id} got no result.`);
    expect(s.proxy.uploads).toHaveLength(1);
  });

  it("refuses a task that is still processing (exit 8)", async () => {
    const s = await setup({ numbersPerSecond: 1 });
    const out = await s.run(submitArgs(s.e.file("crm.csv", crmCsv(20)), "--yes", "--quiet"));
    const id = out.stdout.trim();
    const retry = await s.run(["retry-failed", id, "--yes"]);
    expect(retry.code).toBe(8);
    expect(retry.stderr).toContain(`bulkcheck wait ${id}`);
    expect(s.proxy.uploads).toHaveLength(1);
  });

  it("retries the numbers a retry task still got no result for", async () => {
    const s = await setup();
    const [id] = await submitAndWait(s, s.e.file("crm.csv", crmCsv(30)));
    const missing = withoutResult(uploadLines(s.proxy.uploads[0]));
    const retryId = (await s.run(["retry-failed", id!, "--yes"])).stdout.trim();
    expect((await s.run(["wait", retryId, "--interval", "0.2", "--quiet"])).code).toBe(0);
    // The sandbox decides misses per number, so every retried number misses again.
    const out = await s.run(["retry-failed", retryId, "--yes", "--dry-run"]);
    expect(out.stderr).not.toContain("has changed");
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain(`${missing.length} of ${missing.length} numbers of task ${retryId} got no result.`);
  });
});

describe("bulkcheck retry-failed terminates and retries (issue 12, problem 5)", () => {
  /** The store's tasks, each with the task it retries. */
  async function lineageInStore(e: E2e): Promise<Array<{ task: unknown; retryOf: unknown }>> {
    return (await storedTasks(e)).map((task) => ({ task: task.taskId, retryOf: task.retryOf }));
  }

  /**
   * Writes a journal of bulkcheck 0.1 that the next command imports into the store: for
   * each task id, a submit entry like the first run's part (under a key of its own) that
   * retries `retryOf`, and the entry of the task its key was answered with.
   */
  async function legacyRetries(e: E2e, retries: ReadonlyArray<{ taskId: string; retryOf: string }>): Promise<void> {
    const [run] = await storedRuns(e);
    const part = run!.tasks[0]!;
    const scope = { base_url: run!.scope.baseUrl, profile: run!.scope.profile };
    const at = part.submittedAt!;
    const entries = retries.flatMap(({ taskId, retryOf }, n) => [
      {
        type: "submit",
        at,
        ...scope,
        idempotency_key: `forged-${n}`,
        product: part.product,
        country: part.country,
        source: { path: run!.source.path, size: run!.source.size, mtime_ms: run!.source.mtimeMs, sha256: run!.source.sha256 },
        chunk: { index: 0, of: 1, count: part.count, sha256: part.sha256 },
        preparation: run!.settings,
        prepared: run!.prepared,
        retry_of: retryOf,
      },
      { type: "task", at, ...scope, idempotency_key: `forged-${n}`, task_id: taskId, replayed: false },
    ]);
    writeFileSync(join(e.configDir, "journal.jsonl"), entries.map((entry) => JSON.stringify(entry)).join("\n") + "\n");
  }

  it("makes a new task for a retry of a task that got no result at all, and a retry of that retry terminates with another", async () => {
    const s = await setup({ noResultRate: 1 });
    const [first] = await submitAndWait(s, s.e.file("crm.csv", crmCsv(30)));
    const retry = await s.run(["retry-failed", first!, "--yes"]);
    expect(retry.code, retry.stderr).toBe(0);
    const second = retry.stdout.trim();
    expect(second).toMatch(TASK_ID);
    expect(second).not.toBe(first);
    expect((await s.run(["wait", second, "--interval", "0.2", "--quiet"])).code).toBe(0);

    const plan = await s.run(["retry-failed", second, "--dry-run"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain(`Already retried: these 30 numbers got no result in 2 tasks in a row (${second}, ${first})`);
    const again = await s.run(["retry-failed", second, "--yes"]);
    expect(again.code, again.stderr).toBe(0);
    const third = again.stdout.trim();
    expect([first, second]).not.toContain(third);
    expect(s.e.state().tasks).toHaveLength(3);
    for (const { task, retryOf } of await lineageInStore(s.e)) expect(retryOf).not.toBe(task);
  });

  it("makes a new task for a failed task, with and without --resubmit, and a retry of such a retry terminates", async () => {
    const s = await setup({ failRate: 1 });
    const first = (await s.run(submitArgs(s.e.file("crm.csv", crmCsv(20)), "--yes", "--quiet"))).stdout.trim();
    expect((await s.run(["wait", first, "--interval", "0.2", "--quiet"])).code).toBe(6);
    const retried = (await s.run(["retry-failed", first, "--yes", "--quiet"])).stdout.trim();
    const resubmitted = await s.run(["retry-failed", first, "--yes", "--resubmit", "--quiet"]);
    expect(resubmitted.code, resubmitted.stderr).toBe(0);
    const ids = [first, retried, resubmitted.stdout.trim()];
    expect(new Set(ids).size).toBe(3);
    expect((await s.run(["wait", ids[2]!, "--interval", "0.2", "--quiet"])).code).toBe(6);
    const plan = await s.run(["retry-failed", ids[2]!, "--dry-run"]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain(`got no result in 2 tasks in a row (${ids[2]}, ${first})`);
    for (const { task, retryOf } of await lineageInStore(s.e)) expect(retryOf).not.toBe(task);
  });

  it("stops with exit 1, asking the service once, on an imported journal that records a task as a retry of itself (as older versions wrote)", async () => {
    const s = await setup({ failRate: 1 });
    const first = (await s.run(submitArgs(s.e.file("crm.csv", crmCsv(20)), "--yes", "--quiet"))).stdout.trim();
    expect((await s.run(["wait", first, "--interval", "0.2", "--quiet"])).code).toBe(6);
    await legacyRetries(s.e, [{ taskId: first, retryOf: first }]);
    const checksBefore = s.e.state().stats.by_route.check ?? 0;
    const out = await s.run(["retry-failed", first, "--yes", "--resubmit"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("from the journal of bulkcheck 0.1");
    expect(out.stderr).toContain(`records task ${first} as a retry of ${first}, which goes round in a circle`);
    expect((s.e.state().stats.by_route.check ?? 0) - checksBefore).toBe(1);
    expect(s.proxy.uploads).toHaveLength(1);
  });

  it("stops with exit 1 on a lineage over 100 retries deep", async () => {
    const s = await setup({ failRate: 1 });
    const first = (await s.run(submitArgs(s.e.file("crm.csv", crmCsv(20)), "--yes", "--quiet"))).stdout.trim();
    expect((await s.run(["wait", first, "--interval", "0.2", "--quiet"])).code).toBe(6);
    const ancestor = (n: number) => `ancestor${n}`;
    await legacyRetries(s.e, [
      { taskId: first, retryOf: ancestor(1) },
      ...Array.from({ length: 101 }, (_, i) => ({ taskId: ancestor(i + 1), retryOf: ancestor(i + 2) })),
    ]);
    const out = await s.run(["retry-failed", first, "--dry-run"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`Task ${first} is more than 100 retries deep in the store; no retry is made.`);
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FaultKind } from "../../src/sandbox/index.js";
import { createTestDatabase } from "../helpers/postgres.js";
import {
  e2eSandboxes,
  lines,
  listedRuns,
  listText,
  storedRuns,
  storedTasks,
  submitArgs,
  submittedIds,
  type E2e,
} from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();

/** A sleep that records each wait and moves the sandbox clock, as the real one would. */
function recordingSleep(e: E2e, sleeps: number[]) {
  return async (ms: number) => {
    sleeps.push(ms);
    e.clock.ms += ms;
    await new Promise((resolve) => setImmediate(resolve));
  };
}

describe("retries", () => {
  it("retries 42901 and 50303 after their Retry-After and ends with exactly one task (exit 0)", async () => {
    const e = await sandbox();
    e.sandbox.scriptFaults([
      { route: "submit", fault: "42901", retryAfter: "4", times: 2 },
      { route: "submit", fault: "50303", retryAfter: "7" },
    ]);
    const sleeps: number[] = [];
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--verbose"), { sleep: recordingSleep(e, sleeps) });
    expect(out.code).toBe(0);
    expect(lines(out.stdout)).toHaveLength(1);
    expect(e.state().tasks.map((task) => task.id)).toEqual([out.stdout.trim()]);
    expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
    // Waits never undercut Retry-After; jitter only lengthens them.
    expect(sleeps).toHaveLength(3);
    expect(sleeps[0]).toBeGreaterThanOrEqual(4000);
    expect(sleeps[1]).toBeGreaterThanOrEqual(4000);
    expect(sleeps[2]).toBeGreaterThanOrEqual(7000);
    expect(out.stderr).toMatch(/POST \/api\/v1\/bulk-tasks → \d+ code 42901/);
    expect(out.stderr).toMatch(/POST \/api\/v1\/bulk-tasks → \d+ code 50303/);
    expect(out.stderr).toMatch(/retry: attempt 4 in 7\.\ds/);
  });

  it("retries a check that met 50303 while waiting, and the wait still ends with exit 0", async () => {
    const e = await sandbox();
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    e.sandbox.scriptFaults([{ route: "check", fault: "50303", retryAfter: "2", times: 2 }]);
    const out = await e.run(["wait", id, "--interval", "0.2"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(`${id}\tsuccess\n`);
    expect(e.state().stats.faults_injected["50303"]).toBe(2);
  });

  it("gives up with exit 7 when the service stays at capacity, having created nothing", async () => {
    const e = await sandbox();
    e.sandbox.scriptFaults([{ route: "submit", fault: "42901", times: 50 }]);
    const out = await e.run(submitArgs(e.file("list.txt", listText(500))));
    expect(out.code).toBe(7);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("error:");
    expect(e.state().tasks).toEqual([]);
  });

  it.each([1, 6, 8])("survives a chaos run with seed %i: submit --wait -o ends with exit 0, one task and a complete file", async (seed) => {
    const chaosFaults: FaultKind[] = ["42901", "50303", "50400", "drop", "drop-after-commit", "drop-mid-download"];
    const e = await sandbox({ chaos: 0.4, chaosFaults, seed });
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--wait", "--interval", "0.2", "-o", "results.csv"));
    expect(out.code).toBe(0);
    const state = e.state();
    expect(Object.values(state.stats.faults_injected).reduce((sum, n) => sum + (n ?? 0), 0)).toBeGreaterThanOrEqual(2);
    expect(state.tasks.map((task) => task.id)).toEqual(submittedIds(out.stderr));
    expect(state.ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
    expect(lines(readFileSync(join(e.dir, "results.csv"), "utf8"))).toHaveLength(501);
  });

  it("exits 1 without a stack trace when the service answers something unreadable, and shows it with --verbose", async () => {
    const e = await sandbox();
    e.sandbox.scriptFaults([{ route: "balance", fault: "truncated-json" }]);
    const out = await e.run(["balance"]);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("error:");
    e.sandbox.scriptFaults([{ route: "balance", fault: "no-code-envelope" }]);
    const verbose = await e.run(["balance", "--verbose"]);
    expect(verbose.code).toBe(1);
    expect(verbose.stderr).toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  });
});

describe("crash safety", () => {
  it("returns the task the service committed when the response was lost, reserved once, and stores it as replayed", async () => {
    const e = await sandbox();
    e.sandbox.scriptFaults([{ route: "submit", fault: "drop-after-commit" }]);
    const list = e.file("list.txt", listText(500));
    const first = await e.run(submitArgs(list));
    expect(first.code).toBe(0);
    const id = first.stdout.trim();
    expect(first.stderr).toContain(`Task ${id} had already been created for this run by an earlier attempt whose answer was lost`);
    expect(e.state().tasks.map((task) => task.id)).toEqual([id]);
    expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
    const tasks = await storedTasks(e);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ taskId: id, replayed: true });
  });

  it("carries on with the stored key when a submit died before it learned its task id", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    // Every attempt of the first run (8) is dropped after the service committed the task.
    e.sandbox.scriptFaults([{ route: "submit", fault: "drop-after-commit", times: 8 }]);
    const died = await e.run(submitArgs(list));
    expect(died.code).toBe(7);
    expect(died.stdout).toBe("");
    expect(e.state().scripted_faults_pending).toBe(0);
    const [task] = e.state().tasks;
    expect(task).toBeDefined();
    // The key was stored before the upload; the task id never came back, and the run is not finished.
    const [diedRun] = await storedRuns(e);
    expect(diedRun!.state).toBe("open");
    expect(diedRun!.tasks).toEqual([expect.objectContaining({ idempotencyKey: expect.stringMatching(/^bc2-/) })]);
    expect(diedRun!.tasks[0]!.taskId).toBeUndefined();

    const rerun = await e.run(submitArgs(list));
    expect(rerun.code).toBe(0);
    expect(rerun.stdout.trim()).toBe(task!.id);
    expect(rerun.stderr).toContain("Carrying on run");
    expect(rerun.stderr).toContain(`Task ${task!.id} had already been created for this run by an earlier attempt`);
    expect(e.state().tasks).toHaveLength(1);
    expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
    const runs = await storedRuns(e);
    expect(runs.map((run) => run.id)).toEqual([diedRun!.id]);
    expect(runs[0]!.tasks.map((stored) => [stored.idempotencyKey, stored.taskId])).toEqual([[diedRun!.tasks[0]!.idempotencyKey, task!.id]]);
  });
});

/** Issue 34, point 7: a task the service accepted is never lost to the client, whatever else its answer holds. */
describe("an accepted task is never forgotten", () => {
  it.each([
    ["the local store", () => Promise.resolve({})],
    ["a team's store", async () => ({ BULKCHECK_STORE_URL: await createTestDatabase() })],
  ])(
    "records a task whose upload's answer it refuses on %s, exits 7 naming it, and the same command carries the run on and follows it",
    async (_, storeEnv) => {
      const e = await sandbox();
      const env = await storeEnv();
      const argv = submitArgs(e.file("list.txt", listText(500)), "--wait", "--interval", "0.2", "-o", "out.csv");
      e.sandbox.scriptFaults([{ route: "submit", fault: "malformed-after-commit" }]);
      const refused = await e.run(argv, { env });
      expect(refused.code, refused.stderr).toBe(7);
      const [task] = e.state().tasks;
      expect(refused.stderr).toContain(
        `error: The service took the upload as task ${task!.id}, but answered with a task whose created_at is not an ISO 8601 timestamp ("yesterday at noon").`,
      );
      expect(refused.stderr).toContain(`Run the same command again: it carries the run on and follows task ${task!.id}`);
      // The task is the open run's part: recorded before anything else of the answer was judged.
      const [open] = (await listedRuns(e, ["--state", "open"], { env })).runs;
      const shown = await e.run(["runs", "show", open!.id, "--json"], { env });
      expect((JSON.parse(shown.stdout) as { tasks: Array<{ task_id: string }> }).tasks.map((part) => part.task_id)).toEqual([task!.id]);

      const again = await e.run(argv, { env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`Carrying on run ${open!.id}`);
      expect(again.stderr).toContain(`Task ${task!.id}: submitted earlier by this run, carried on.`);
      expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(501);
      // One upload, one task, reserved once.
      expect(e.state().stats.by_route.submit).toBe(1);
      expect(e.state().tasks).toHaveLength(1);
      expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
    },
  );
});

describe("authentication and configuration errors", () => {
  it("exits 4 when the service refuses the key (40100), without echoing it", async () => {
    const e = await sandbox();
    const out = await e.run(["balance"], { env: { BULKCHECK_API_KEY: "sk_e2e_LEAKCANARY_wrongwrongwrongwr" } });
    expect(out.code).toBe(4);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("error:");
    expect(out.stderr).toMatch(/config set api-key|BULKCHECK_API_KEY/);
  });

  it("exits 4 with the command that sets the key when no key is configured", async () => {
    const e = await sandbox();
    const out = await e.run(["status", "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53"], { env: { BULKCHECK_API_KEY: undefined } });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain('No API key is set for profile "default".');
    expect(out.stderr).toContain("bulkcheck config set api-key");
    expect(e.state().stats.requests).toBe(0);
  });

  it("exits 2 with the command that sets the base URL when none is configured", async () => {
    const e = await sandbox();
    const out = await e.run(["balance"], { env: { BULKCHECK_BASE_URL: undefined } });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("No service base URL is set");
    expect(out.stderr).toContain("bulkcheck config set base-url");
  });

  it("uses a key stored with config set api-key from stdin", async () => {
    const e = await sandbox();
    const noEnvKey = { BULKCHECK_API_KEY: undefined };
    const set = await e.run(["config", "set", "api-key", "-"], { env: noEnvKey, stdin: `${e.env.BULKCHECK_API_KEY}\n` });
    expect(set.code).toBe(0);
    const out = await e.run(["balance", "--json"], { env: noEnvKey });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ balance_micros: 10_000_000 });
  });
});

import { describe, expect, it } from "vitest";
import { holdSlots } from "../helpers/fault-fixtures.js";
import { API_KEY, e2eSandboxes, lines, listText, storedRuns, submitArgs, until } from "../helpers/sandbox.js";

/**
 * Ten bulkcheck processes at once, sharing one config directory (one install, one
 * store), against a service with five request slots. Real processes and clock.
 */
const sandbox = e2eSandboxes();
const PROCESSES = 10;

describe("ten concurrent submits against five slots", () => {
  it("all succeed, each with one task and one run in the shared store, never more uploads at once than the slots, and re-runs while unfinished make no task", async () => {
    const e = await sandbox({ fakeClock: false, maxInFlight: 5, retryAfterSeconds: 1 });
    // Sizes differ, so each list's task can be told apart in the sandbox.
    const lists = Array.from({ length: PROCESSES }, (_, i) => e.file(`list-${i}.txt`, listText(500 + i, i * 1000)));
    // All five slots are taken by uploads that stall, so the first submits meet 42901.
    const held = await holdSlots(e.sandbox.url, API_KEY, 5);
    await until(() => e.state().stats.slots_in_flight === 5);
    const runs = lists.map((list) => e.spawn(submitArgs(list, "--yes", "--verbose")));
    try {
      // The processes take the account's five upload slots through the store: five meet 42901, the others wait for a slot.
      await until(() => runs.filter((run) => /code 42901/.test(run.output().stderr)).length >= 5, 30_000);
    } finally {
      held.release();
    }
    const results = await Promise.all(runs.map((run) => run.done));

    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const state = e.state();
    expect(state.tasks).toHaveLength(PROCESSES);
    const bySize = new Map(state.tasks.map((task) => [task.submitted_lines, task.id]));
    results.forEach((result, i) => expect(lines(result.stdout)).toEqual([bySize.get(500 + i)]));

    // The shared store holds every run and task, each once.
    const stored = await storedRuns(e);
    expect(stored).toHaveLength(PROCESSES);
    expect(new Set(stored.flatMap((run) => run.tasks.map((task) => task.taskId)))).toEqual(new Set(state.tasks.map((task) => task.id)));
    expect(stored.every((run) => run.state === "finished")).toBe(true);
    expect(state.ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(PROCESSES);
  }, 90_000);
});

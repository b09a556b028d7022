import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../../src/config/duration.js";
import { jittered, waitForTasks, waitUntilFinished } from "../../src/tasks/wait.js";
import { InterruptedError, PendingError, ServiceUnavailableError, TaskFailedError, UsageError } from "../../src/errors.js";
import type { Task } from "../../src/spec/task.js";

const task = (id: string, status: Task["status"]): Task => ({
  id,
  product: "carrier_batch",
  status,
  country: "GB",
  total: 600,
  created_at: "2026-11-22T00:00:00Z",
});

function clock() {
  let now = 0;
  const sleeps: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    sleeps,
  };
}

describe("waitForTasks", () => {
  it("polls until every task has finished, never sooner than the interval", async () => {
    const c = clock();
    const script: Record<string, Task["status"][]> = { a: ["processing", "processing", "success"], b: ["processing", "failed"] };
    const checks: string[] = [];
    const outcome = await waitForTasks({
      checkTask: async (id) => {
        checks.push(id);
        return task(id, script[id]!.shift()!);
      },
      ids: ["a", "b"],
      intervalMs: 30_000,
      now: c.now,
      sleep: c.sleep,
      random: () => 1,
    });
    expect(outcome.timedOut).toBe(false);
    expect(outcome.tasks.get("a")?.status).toBe("success");
    expect(outcome.tasks.get("b")?.status).toBe("failed");
    expect(checks).toEqual(["a", "b", "a", "b", "a"]);
    expect(c.sleeps).toEqual([33_000, 33_000]);
  });

  it("stops at the timeout with tasks still processing", async () => {
    const c = clock();
    const outcome = await waitForTasks({
      checkTask: async (id) => task(id, "processing"),
      ids: ["a"],
      intervalMs: 30_000,
      timeoutMs: 70_000,
      now: c.now,
      sleep: c.sleep,
      random: () => 0,
    });
    expect(outcome.timedOut).toBe(true);
    expect(c.sleeps).toEqual([30_000, 30_000, 10_000]);
  });

  it("tolerates transient check failures and gives up after too many in a row", async () => {
    const c = clock();
    let calls = 0;
    const transient: string[] = [];
    const outcome = await waitForTasks({
      checkTask: async (id) => {
        calls++;
        if (calls <= 2) throw new ServiceUnavailableError("maintenance");
        return task(id, "success");
      },
      ids: ["a"],
      intervalMs: 1000,
      now: c.now,
      sleep: c.sleep,
      random: () => 0,
      onTransientError: (id) => transient.push(id),
    });
    expect(outcome.tasks.get("a")?.status).toBe("success");
    expect(transient).toEqual(["a", "a"]);
    await expect(
      waitForTasks({
        checkTask: async () => {
          throw new ServiceUnavailableError("down");
        },
        ids: ["a"],
        intervalMs: 1,
        now: c.now,
        sleep: c.sleep,
        random: () => 0,
        maxConsecutiveErrors: 3,
      }),
    ).rejects.toThrow("down");
  });

  it("does not swallow errors that are not transient", async () => {
    const c = clock();
    await expect(
      waitForTasks({
        checkTask: async () => {
          throw new UsageError("bad id");
        },
        ids: ["a"],
        intervalMs: 1,
        now: c.now,
        sleep: c.sleep,
        random: () => 0,
      }),
    ).rejects.toThrow("bad id");
  });

  it("only ever lengthens the interval with jitter", () => {
    expect(jittered(30_000, () => 0)).toBe(30_000);
    expect(jittered(30_000, () => 0.999)).toBeLessThanOrEqual(33_000);
    expect(jittered(30_000, () => 0.5)).toBe(31_500);
  });

  it("never lengthens the longest interval past what a timer holds, where it would fire after 1 ms", () => {
    // --interval 2147483 is accepted (the longest a timer holds); 10% more overflowed to a 1 ms poll.
    expect(jittered(MAX_TIMER_MS - 647, () => 0.999)).toBe(MAX_TIMER_MS);
    expect(jittered(MAX_TIMER_MS, () => 0.5)).toBe(MAX_TIMER_MS);
    expect(jittered(MAX_TIMER_MS, () => 0)).toBe(MAX_TIMER_MS);
  });
});

describe("waitUntilFinished", () => {
  const options = (script: Record<string, Task["status"][]>, c = clock()) => ({
    checkTask: async (id: string) => task(id, script[id]!.length > 1 ? script[id]!.shift()! : script[id]![0]!),
    ids: Object.keys(script),
    intervalMs: 1000,
    now: c.now,
    sleep: c.sleep,
    random: () => 0,
  });

  it("returns the finished tasks in the order of the ids given", async () => {
    const tasks = await waitUntilFinished(options({ b: ["processing", "success"], a: ["success"] }));
    expect(tasks.map((t) => [t.id, t.status])).toEqual([
      ["b", "success"],
      ["a", "success"],
    ]);
  });

  it("throws TaskFailedError naming every failed task, once all have finished", async () => {
    const failed = waitUntilFinished(options({ a: ["failed"], b: ["processing", "success"], c: ["processing", "processing", "failed"] }));
    await expect(failed).rejects.toThrow(TaskFailedError);
    await expect(failed).rejects.toMatchObject({
      taskIds: ["a", "c"],
      message: "2 task(s) failed: a, c. Failed tasks are refunded in full.",
    });
  });

  it("throws PendingError with the tasks still processing and the timeout as given", async () => {
    const pending = waitUntilFinished({ ...options({ a: ["success"], b: ["processing"] }), timeoutSeconds: 2.5 });
    await expect(pending).rejects.toThrow(PendingError);
    await expect(pending).rejects.toMatchObject({
      taskIds: ["b"],
      message: "Still processing after 2.5s: b.",
      hint: expect.stringContaining("bulkcheck wait b"),
    });
  });

  it("turns a wait stopped by its signal into InterruptedError saying how to resume", async () => {
    const controller = new AbortController();
    const c = clock();
    const stopped = waitUntilFinished({
      ...options({ a: ["processing"], b: ["processing"] }, c),
      signal: controller.signal,
      sleep: async (_ms: number, signal?: AbortSignal) => {
        controller.abort();
        signal?.throwIfAborted();
      },
    });
    await expect(stopped).rejects.toThrow(InterruptedError);
    await expect(stopped).rejects.toMatchObject({ hint: "Resume with: bulkcheck wait a b" });
  });
});

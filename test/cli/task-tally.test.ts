import { describe, expect, it } from "vitest";
import { TaskTally } from "../../src/cli/views/task-tally.js";
import type { Task } from "../../src/spec/task.js";

/** A task of `total` numbers: processing, or finished with its counts. */
function task(id: string, total: number, finished?: { success: number; noResult: number } | "failed"): Task {
  const base = { id, product: "carrier_batch", country: "GB", total, created_at: "2026-11-28T10:00:00Z" };
  if (finished === undefined) return { ...base, status: "processing" };
  if (finished === "failed") return { ...base, status: "failed" };
  return { ...base, status: "success", success_cnt: finished.success, failure_cnt: finished.noResult };
}

const START = 1_000_000;

describe("a tally of tasks", () => {
  it("counts the numbers each finished task checked, with or without a result, of the numbers known", () => {
    const tally = new TaskTally<string>(
      [
        ["a", undefined],
        ["b", undefined],
      ],
      START,
    );
    expect(tally.numbersLine()).toBe("0 of 0+ numbers checked");
    tally.see("a", task("a", 1000), START + 1000);
    expect(tally.numbersLine()).toBe("0 of 1,000+ numbers checked");
    tally.see("b", task("b", 2000), START + 1000);
    tally.see("a", task("a", 1000, { success: 990, noResult: 10 }), START + 5000);
    expect(tally.numbersLine()).toBe("1,000 of 3,000 numbers checked (10 without result)");
    // A failed task checked nothing, even with the counts a service may send with it (the sandbox's say none had a result).
    tally.see("b", { ...task("b", 2000, "failed"), success_cnt: 0, failure_cnt: 2000 }, START + 6000);
    expect(tally.counts()).toMatchObject({ tasks: 2, seen: 2, finished: 2, failed: 1, numbers: 3000, checked: 1000, noResult: 10 });
    expect(tally.numbersLine()).toBe("1,000 of 3,000 numbers checked (10 without result)");
  });

  it("takes a part's numbers as planned before its task exists", () => {
    const tally = new TaskTally<number>(
      [
        [0, 500],
        [1, 300],
      ],
      START,
    );
    expect(tally.counts()).toMatchObject({ tasks: 2, seen: 0, numbers: 800, numbersKnown: true });
  });

  it("gives the elapsed time in whole seconds, and an estimate only once a task finished while watched, counted down until the next", () => {
    const tally = new TaskTally<string>(
      [
        ["a", undefined],
        ["b", undefined],
        ["c", undefined],
      ],
      START,
    );
    tally.see("a", task("a", 100), START);
    tally.see("b", task("b", 100), START);
    // Finished when first seen: no pace to judge by.
    tally.see("c", task("c", 100, { success: 100, noResult: 0 }), START);
    expect(tally.timeLine(START + 400)).toBe("0 s elapsed");
    expect(tally.timeLine(START + 65_000)).toBe("1 min 5 s elapsed");
    tally.see("a", task("a", 100, { success: 100, noResult: 0 }), START + 10_000);
    // 100 numbers in 10 s: the last 100 take 10 s more, counted down from then.
    expect(tally.timeLine(START + 10_000)).toBe("10 s elapsed, about 10 s left");
    expect(tally.timeLine(START + 14_000)).toBe("14 s elapsed, about 6 s left");
    // Past the estimate it says the least there is, never a negative time.
    expect(tally.timeLine(START + 30_000)).toBe("30 s elapsed, about 1 s left");
    tally.see("b", task("b", 100, { success: 100, noResult: 0 }), START + 31_000);
    expect(tally.timeLine(START + 31_000)).toBe("31 s elapsed");
  });
});

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PartByPart, partRange, type EarlyParts, type EarlyStop } from "../../src/chain/part-by-part.js";
import { TaskFailedError } from "../../src/errors.js";
import type { RunOutcome } from "../../src/run/submit-request.js";
import type { UploadResult } from "../../src/tasks/submit.js";

/** Five parts of three numbers each, as a first product's run uploads them. */
function parts(dir: string): UploadResult[] {
  return Array.from({ length: 5 }, (_, index) => {
    const path = join(dir, `upload-${index}.txt`);
    const numbers = [0, 1, 2].map((n) => String(447400000000 + index * 10 + n));
    writeFileSync(path, numbers.join("\n") + "\n");
    return { upload: { path, index, of: 5, count: 3 }, task: { id: `t${index}` }, replayed: false } as unknown as UploadResult;
  });
}

function byPart(options: { fail?: number; open?: number[]; lastPart?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-part-by-part-"));
  const bought: EarlyParts[] = [];
  const stops: EarlyStop[] = [];
  const early = new PartByPart({
    // Every number of a part is selected: no condition, so no result is read.
    step: { product: "number_activity_batch" },
    minTaskSize: 5,
    staged: () => Promise.reject(new Error("no result is read without a condition")),
    run: (group) => {
      bought.push(group);
      if (group.index === options.fail) return Promise.reject(new TaskFailedError("failed", ["a1"]));
      return Promise.resolve({ results: [] } as unknown as RunOutcome);
    },
    room: () => Promise.resolve(),
    // At the share selected (all), a last part of 10 fills a task of 5 with room to spare.
    lastPartSize: () => options.lastPart ?? 10,
    isOpen: (group) => Promise.resolve(options.open?.includes(group.index) ?? false),
    onStop: (stop) => {
      stops.push(stop);
      return Promise.resolve();
    },
    dir,
    signal: new AbortController().signal,
  });
  return { early, bought, stops, results: parts(dir) };
}

const numbersOf = (group: EarlyParts) => group.lists.flatMap((list) => readFileSync(list.path, "utf8").trim().split("\n"));

describe("PartByPart", () => {
  it("groups finished parts in list order once they select a task's minimum, and never the last part", async () => {
    const { early, bought, results } = byPart();
    for (const index of [1, 0, 3, 2, 4]) early.partDone(results[index]!);
    const runs = await early.settle();
    expect(bought.map((group) => [group.first, group.last, group.selected])).toEqual([
      [0, 1, 6],
      [2, 3, 6],
    ]);
    expect(bought.map(partRange)).toEqual(["1–2 of 5", "3–4 of 5"]);
    expect(numbersOf(bought[0]!)).toEqual(["447400000000", "447400000001", "447400000002", "447400000010", "447400000011", "447400000012"]);
    expect(runs.map((run) => run.parts.index)).toEqual([0, 1]);
  });

  it("buys nothing part by part when the last part would select too few for a task of its own", async () => {
    const { early, bought, results } = byPart({ lastPart: 7 });
    for (const result of results) early.partDone(result);
    await early.settle();
    expect(bought).toEqual([]);
  });

  it("waits for a part that has not finished: the parts after it are not grouped before it", async () => {
    const { early, bought, results } = byPart();
    for (const index of [1, 2, 3]) early.partDone(results[index]!);
    await early.settle();
    expect(bought).toEqual([]);
  });

  it("once the first product's run has ended, leaves the groups not started to the chain's run, but carries on those whose run is open", async () => {
    const { early, bought, results } = byPart({ open: [1] });
    early.end();
    for (const result of results) early.partDone(result);
    await early.settle();
    expect(bought.map((group) => group.index)).toEqual([1]);
  });

  it("stops buying part by part when a group's task fails, and says so", async () => {
    const { early, bought, stops, results } = byPart({ fail: 0 });
    for (const result of results) early.partDone(result);
    expect(await early.settle()).toEqual([]);
    expect(bought.map((group) => group.index)).toEqual([0]);
    expect(stops.map((stop) => stop.reason)).toEqual(["task failed"]);
  });
});

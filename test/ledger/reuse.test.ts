import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { latestResults, splitByFreshness } from "../../src/ledger/reuse.js";
import { IdentifierSet } from "../../src/prepare/identifier-set.js";
import type { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Scope } from "../../src/store/store.js";
import { tempDir } from "../helpers/cli.js";
import { tempStores } from "../helpers/store.js";

const SCOPE: Scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };
const openStore = tempStores();

/** A store whose ledger holds these numbers' activity results, each task checked at its date. */
async function ledgerWith(results: Record<string, readonly number[]>, store = openStore()): Promise<SqliteStore> {
  for (const [checkedAt, numbers] of Object.entries(results)) {
    const task = await store.addTask({ scope: SCOPE, product: "number_activity_batch", taskId: checkedAt });
    await store.updateTask(task.ref, { status: "success", checkedAt });
    await store.addResults(
      task.ref,
      ["activated"],
      numbers.map((n) => ({ identifier: String(n), values: ["true"] })),
    );
    await store.markRecorded(task.ref, ["activated"], checkedAt);
  }
  return store;
}

function listOf(numbers: readonly number[]) {
  const dir = tempDir();
  const path = join(dir, "list.txt");
  writeFileSync(path, numbers.map((n) => `${n}\n`).join(""));
  return { list: { path, count: numbers.length, bytes: 0, sha256: "" }, target: { dir, base: "upload" } };
}

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean).map(Number);
const N = (i: number) => 447400100000 + i;

describe("splitting a list by the freshness of its ledger results", () => {
  it("uploads the numbers without a fresh result, in list order, and reuses the others", async () => {
    const store = await ledgerWith({ "2026-11-20T00:00:00.000Z": [N(1), N(2)], "2026-11-26T00:00:00.000Z": [N(3), N(4)] });
    const latest = await latestResults(store, SCOPE, "number_activity_batch", await store.maxTaskRef());
    const { list, target } = listOf([N(5), N(4), N(1), N(3), N(6)]);
    const reused = new IdentifierSet();
    const split = await splitByFreshness({
      list,
      latest,
      freshSince: "2026-11-25T00:00:00.000Z",
      minTaskSize: 1,
      maxTaskSize: 10,
      target,
      reusedNumbers: reused,
      reusedTasks: new Set(),
    });
    expect(split).toMatchObject({
      kept: 5,
      reused: 2,
      padded: 0,
      reusedFrom: { oldest: "2026-11-26T00:00:00.000Z", newest: "2026-11-26T00:00:00.000Z" },
      stale: { numbers: 1, oldest: "2026-11-20T00:00:00.000Z" },
    });
    expect(split.parts.map((part) => lines(part.path))).toEqual([[N(5), N(1), N(6)]]);
    expect(reused.get(N(4))).toBeDefined();
    expect(reused.get(N(1))).toBeUndefined();
  });

  it("checks the oldest fresh results again when the numbers to upload are fewer than a task's minimum", async () => {
    const store = await ledgerWith({ "2026-11-24T00:00:00.000Z": [N(2), N(4)], "2026-11-26T00:00:00.000Z": [N(1), N(3)] });
    const latest = await latestResults(store, SCOPE, "number_activity_batch", await store.maxTaskRef());
    const { list, target } = listOf([N(1), N(2), N(3), N(4), N(5)]);
    const split = await splitByFreshness({
      list,
      latest,
      freshSince: "2026-11-20T00:00:00.000Z",
      minTaskSize: 3,
      maxTaskSize: 10,
      target,
      reusedNumbers: new IdentifierSet(),
      reusedTasks: new Set(),
    });
    expect(split).toMatchObject({ kept: 5, reused: 2, padded: 2 });
    expect(split.parts.map((part) => lines(part.path))).toEqual([[N(2), N(4), N(5)]]);
  });

  it("makes no part when every number is fresh, and ignores results newer than the plan's task reference", async () => {
    const store = await ledgerWith({ "2026-11-26T00:00:00.000Z": [N(1), N(2)] });
    const asPlanned = await store.maxTaskRef();
    await ledgerWith({ "2026-11-27T00:00:00.000Z": [N(1)] }, store);
    const { list, target } = listOf([N(1), N(2)]);
    const latest = await latestResults(store, SCOPE, "number_activity_batch", asPlanned);
    const split = await splitByFreshness({
      list,
      latest,
      freshSince: "2026-11-25T00:00:00.000Z",
      minTaskSize: 500,
      maxTaskSize: 10,
      target,
      reusedNumbers: new IdentifierSet(),
      reusedTasks: new Set(),
    });
    expect(split).toMatchObject({ kept: 2, reused: 2, padded: 0, parts: [], reusedFrom: { newest: "2026-11-26T00:00:00.000Z" } });
    expect((await latestResults(store, SCOPE, "number_activity_batch", 0)).byNumber.size).toBe(0);
  });
});

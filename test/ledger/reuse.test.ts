import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { latestAnswers, splitByFreshness, type AnswerRule, type LatestAnswers, type SplitOptions } from "../../src/ledger/reuse.js";
import { IdentifierSet } from "../../src/spec/identifier-set.js";
import type { UploadChunk } from "../../src/prepare/upload-writer.js";
import type { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Scope } from "../../src/store/store.js";
import { tempDir } from "../helpers/cli.js";
import { tempStores } from "../helpers/store.js";
import { recordRows } from "../helpers/ledger-rows.js";

const SCOPE: Scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };
const openStore = tempStores();

/** A store whose ledger holds these numbers' activity results, each task checked at its date. */
async function ledgerWith(results: Record<string, readonly number[]>, store = openStore()): Promise<SqliteStore> {
  for (const [checkedAt, numbers] of Object.entries(results)) {
    const task = await store.tasks.add({ scope: SCOPE, product: "number_activity_batch", taskId: checkedAt });
    await store.tasks.update(task.ref, { status: "success", checkedAt });
    const rows = numbers.map((n) => ({ identifier: String(n), values: ["true"] }));
    await recordRows(store.ledger, task.ref, ["activated"], rows, checkedAt);
  }
  return store;
}

/**
 * Splits a list of these numbers (written as a prepared list is) against `answers`: results
 * fresh since `freshSince`, parts of 1 to 10 numbers, padding with the oldest results, numbers
 * without a result not retried, unless `options` say otherwise.
 */
function splitList(numbers: readonly number[], answers: LatestAnswers, freshSince: string, options: Partial<SplitOptions> = {}) {
  const dir = tempDir();
  const path = join(dir, "list.txt");
  writeFileSync(path, numbers.map((n) => `${n}\n`).join(""));
  return splitByFreshness({
    list: { path, count: numbers.length, bytes: 0, sha256: "" },
    answers,
    freshSince,
    minTaskSize: 1,
    maxTaskSize: 10,
    pad: "oldest",
    retryNoResult: false,
    target: { dir, base: "upload" },
    reusedNumbers: new IdentifierSet(),
    reusedTasks: new Set(),
    inFlightTasks: new Set(),
    ...options,
  });
}

/** The ledger's answers as a run planned now sees them (in flight and without a result count). */
const answersNow = (store: SqliteStore, asOfTaskRef: number, rule: Partial<AnswerRule> = {}) =>
  latestAnswers(store, SCOPE, "number_activity_batch", { asOfTaskRef, inFlight: "now", ...rule });

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean).map(Number);
const N = (i: number) => 447400100000 + i;

describe("splitting a list by the freshness of its ledger results", () => {
  it("uploads the numbers without a fresh result, in list order, and reuses the others", async () => {
    const store = await ledgerWith({ "2026-11-20T00:00:00.000Z": [N(1), N(2)], "2026-11-26T00:00:00.000Z": [N(3), N(4)] });
    const answers = await answersNow(store, await store.tasks.maxRef());
    const reused = new IdentifierSet();
    const split = await splitList([N(5), N(4), N(1), N(3), N(6)], answers, "2026-11-25T00:00:00.000Z", { reusedNumbers: reused });
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
    const answers = await answersNow(store, await store.tasks.maxRef());
    const split = await splitList([N(1), N(2), N(3), N(4), N(5)], answers, "2026-11-20T00:00:00.000Z", { minTaskSize: 3 });
    expect(split).toMatchObject({ kept: 5, reused: 2, padded: 2 });
    expect(split.parts.map((part) => lines(part.path))).toEqual([[N(2), N(4), N(5)]]);
  });

  it("makes no part when every number is fresh, and ignores results newer than the plan's task reference", async () => {
    const store = await ledgerWith({ "2026-11-26T00:00:00.000Z": [N(1), N(2)] });
    const asPlanned = await store.tasks.maxRef();
    await ledgerWith({ "2026-11-27T00:00:00.000Z": [N(1)] }, store);
    const split = await splitList([N(1), N(2)], await answersNow(store, asPlanned), "2026-11-25T00:00:00.000Z", { minTaskSize: 500 });
    expect(split).toMatchObject({ kept: 2, reused: 2, padded: 0, parts: [], reusedFrom: { newest: "2026-11-26T00:00:00.000Z" } });
    expect((await answersNow(store, 0)).byNumber.size).toBe(0);
  });

  it("takes numbers in a task still in flight from it, and uploads nothing that was answered", async () => {
    const store = await ledgerWith({ "2026-11-26T00:00:00.000Z": [N(1)] });
    const inFlight = await store.tasks.add({
      scope: SCOPE,
      product: "number_activity_batch",
      taskId: "t-flying",
      submittedAt: "2026-11-27T00:00:00.000Z",
    });
    await store.tasks.addNumbers(inFlight.ref, [N(2), N(3)]);
    const failed = await store.tasks.add({
      scope: SCOPE,
      product: "number_activity_batch",
      taskId: "t-failed",
      submittedAt: "2026-11-27T00:00:00.000Z",
    });
    await store.tasks.addNumbers(failed.ref, [N(4)]);
    await store.tasks.update(failed.ref, { status: "failed" });
    const reused = new IdentifierSet();
    const inFlightTasks = new Set<number>();
    const answers = await answersNow(store, await store.tasks.maxRef());
    const split = await splitList([N(1), N(2), N(3), N(4)], answers, "2026-11-25T00:00:00.000Z", { reusedNumbers: reused, inFlightTasks });
    expect(split).toMatchObject({ kept: 4, reused: 1, inFlight: 2, noResult: 0, padded: 0 });
    // A failed task answered nothing: its number is uploaded.
    expect(split.parts.map((part) => lines(part.path))).toEqual([[N(4)]]);
    expect([...inFlightTasks]).toEqual([inFlight.ref]);
    expect(reused.get(N(2))).toBe(inFlight.ref);
  });

  it("does not buy a task only to retry numbers without a result, nor to renew fresh results, unless asked", async () => {
    const store = await ledgerWith({ "2026-11-26T00:00:00.000Z": [N(1), N(2), N(3)] });
    const task = (await store.tasks.answering(SCOPE, "number_activity_batch", await store.tasks.maxRef()))[0]!;
    // The task was given N(4) and N(5) too, and answered them without a result.
    await store.tasks.addNumbers(task.ref, [N(1), N(2), N(3), N(4), N(5)]);
    const answers = await answersNow(store, await store.tasks.maxRef());
    const split = (options: Partial<SplitOptions>) =>
      splitList([N(1), N(2), N(3), N(4), N(5)], answers, "2026-11-25T00:00:00.000Z", { minTaskSize: 4, ...options });
    expect(await split({})).toMatchObject({ parts: [], reused: 3, noResult: 2, padded: 0 });
    const retried = await split({ retryNoResult: true });
    expect(retried).toMatchObject({ retriedNoResult: 2, padded: 2, paddedFrom: { oldest: "2026-11-26T00:00:00.000Z" } });
    expect(retried.parts.map((part) => lines(part.path))).toEqual([[N(1), N(2), N(4), N(5)]]);
    expect(await split({ retryNoResult: true, pad: "never" })).toMatchObject({ parts: [], waiting: 2, padded: 0 });
  });

  it("names the numbers that wait for a later run, and only those, with an empty ledger or not", async () => {
    const store = await ledgerWith({ "2026-11-26T00:00:00.000Z": [N(1), N(2)] });
    const task = (await store.tasks.answering(SCOPE, "number_activity_batch", await store.tasks.maxRef()))[0]!;
    // N(3) was answered without a result: not waiting, though it has no result either.
    await store.tasks.addNumbers(task.ref, [N(1), N(2), N(3)]);
    const freshSince = "2026-11-25T00:00:00.000Z";
    const waiting = new IdentifierSet();
    const split = await splitList([N(1), N(2), N(3), N(4), N(5)], await answersNow(store, await store.tasks.maxRef()), freshSince, {
      minTaskSize: 5,
      pad: "never",
      waitingNumbers: waiting,
    });
    expect(split).toMatchObject({ parts: [], reused: 2, noResult: 1, waiting: 2 });
    expect([N(1), N(2), N(3), N(4), N(5)].map((n) => waiting.has(n))).toEqual([false, false, false, true, true]);
    const alone = new IdentifierSet();
    const empty = await answersNow(openStore(), 0);
    expect(await splitList([N(6), N(7)], empty, freshSince, { minTaskSize: 5, pad: "never", waitingNumbers: alone })).toMatchObject({
      waiting: 2,
    });
    expect([alone.has(N(6)), alone.has(N(7)), alone.size]).toEqual([true, true, 2]);
  });

  it("counts results alone for a run planned before tasks' numbers were kept", async () => {
    const store = await ledgerWith({ "2026-11-26T00:00:00.000Z": [N(1)] });
    const task = (await store.tasks.answering(SCOPE, "number_activity_batch", await store.tasks.maxRef()))[0]!;
    await store.tasks.addNumbers(task.ref, [N(1), N(2)]);
    const answers = await latestAnswers(store, SCOPE, "number_activity_batch", { asOfTaskRef: await store.tasks.maxRef() });
    expect(answers.byNumber.get(N(2))).toBeUndefined();
    expect(answers.byNumber.get(N(1))).toBeDefined();
  });

  it("uploads again a number answered without a result before --max-age, and counts only results as not reused", async () => {
    const store = await ledgerWith({ "2026-11-20T00:00:00.000Z": [N(1)] });
    const task = (await store.tasks.answering(SCOPE, "number_activity_batch", await store.tasks.maxRef()))[0]!;
    await store.tasks.addNumbers(task.ref, [N(1), N(2)]);
    const freshSince = "2026-11-25T00:00:00.000Z";
    const split = await splitList([N(1), N(2)], await answersNow(store, await store.tasks.maxRef(), { freshSince }), freshSince);
    expect(split).toMatchObject({ reused: 0, noResult: 0, stale: { numbers: 1, oldest: "2026-11-20T00:00:00.000Z" } });
    expect(split.parts.map((part) => lines(part.path))).toEqual([[N(1), N(2)]]);
  });

  it("with nothing of the product in the ledger, cuts the parts from the prepared list as the ledger's numbers would: same names, bytes and hashes", async () => {
    const list = Array.from({ length: 23 }, (_, i) => N(i));
    const described = (parts: UploadChunk[]) =>
      parts.map((part) => {
        const bytes = readFileSync(part.path);
        expect(createHash("sha256").update(bytes).digest("hex")).toBe(part.sha256);
        return { name: basename(part.path), count: part.count, bytes: part.bytes, sha256: part.sha256, numbers: lines(part.path) };
      });
    const freshSince = "2026-11-25T00:00:00.000Z";
    const empty = await answersNow(openStore(), 0);
    // A ledger with one result for a number not in the list: the list is read number by number.
    const unrelated = await ledgerWith({ "2026-11-26T00:00:00.000Z": [N(99)] });
    const cut = described((await splitList(list, empty, freshSince)).parts);
    expect(cut.map((part) => part.count)).toEqual([8, 8, 7]);
    expect(cut.flatMap((part) => part.numbers)).toEqual(list);
    expect(cut).toEqual(described((await splitList(list, await answersNow(unrelated, await unrelated.tasks.maxRef()), freshSince)).parts));
    expect(await splitList(list.slice(0, 3), empty, freshSince, { minTaskSize: 5, pad: "never" })).toMatchObject({ parts: [], waiting: 3 });
  });
});

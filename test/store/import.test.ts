import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { importStore } from "../../src/store/import.js";
import { PostgresStore } from "../../src/store/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Store, TaskRecord } from "../../src/store/store.js";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { collect, LEASE, newRun, OTHER_SCOPE, recordedTask, SCOPE } from "./store-contract.js";
import { cutShortAt, keyOrdered, recordRows } from "../helpers/ledger-rows.js";

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

function kept<T extends Store>(store: T): T {
  opened.push(store);
  return store;
}

const localStore = () => kept(SqliteStore.open(join(tempDir(), "state", "bulkcheck.db")));

/** The stores a local one is imported into, each opened empty (the shared one on a new database of the test run's server). */
const targets: Array<[string, () => Promise<Store>]> = [
  ["the embedded store", () => Promise.resolve(localStore())],
  ["the shared store", async () => kept(await PostgresStore.open(await createTestDatabase(), {}))],
];

const N = (i: number) => String(447400100000 + i);
const CARRIER_COLUMNS = ["carrier", "number_type", "ported"];

/**
 * A machine's history: a finished run with a recorded task, an open run (leased) with one
 * upload under way, one task processing and one whose result is being recorded, and a task
 * met only by downloading it, in another scope, with a column the service added.
 */
async function localHistory(store: Store) {
  await store.runs.create(newRun({ id: "r-done", identity: "nightly" }), LEASE);
  const done = await store.tasks.add({
    scope: SCOPE,
    runId: "r-done",
    part: 0,
    parts: 1,
    product: "number_activity_batch",
    idempotencyKey: "r-done/0",
  });
  await store.tasks.update(done.ref, {
    taskId: "t1",
    status: "success",
    total: 2,
    successCnt: 2,
    failureCnt: 0,
    checkedAt: "2026-11-20T10:00:00.000Z",
  });
  const doneRows = [
    { identifier: N(1), values: ["true"] },
    { identifier: N(2), values: ["false"] },
  ];
  await recordRows(store.ledger, done.ref, ["activated"], doneRows, "2026-11-20T10:01:00.000Z");
  await store.runs.update("r-done", { state: "finished", finishedAt: "2026-11-20T10:02:00.000Z", output: { path: "/out.csv" } });
  await store.runs.release("r-done", LEASE);

  await store.runs.create(newRun({ id: "r-open", identity: "weekly", startedAt: "2026-11-21T09:00:00.000Z" }), LEASE);
  const uploading = await store.tasks.add({
    scope: SCOPE,
    runId: "r-open",
    part: 0,
    parts: 3,
    product: "number_activity_batch",
    idempotencyKey: "r-open/0",
    submittedAt: "2026-11-21T09:00:01.000Z",
  });
  const processing = await store.tasks.add({
    scope: SCOPE,
    runId: "r-open",
    part: 1,
    parts: 3,
    product: "number_activity_batch",
    idempotencyKey: "r-open/1",
  });
  await store.tasks.update(processing.ref, { taskId: "t2", status: "processing", replayed: false });
  const recording = await store.tasks.add({
    scope: SCOPE,
    runId: "r-open",
    part: 2,
    parts: 3,
    product: "number_activity_batch",
    idempotencyKey: "r-open/2",
  });
  await store.tasks.update(recording.ref, { taskId: "t4", status: "success", checkedAt: "2026-11-21T10:00:00.000Z" });
  // Its recording was cut short: the task is not recorded.
  const recordingCut = store.ledger.record(
    recording.ref,
    cutShortAt(keyOrdered(["activated"], [{ identifier: N(3), values: ["true"] }]), 0),
    "2026-11-21T10:01:00.000Z",
  );
  await expect(recordingCut).rejects.toThrow("killed");

  const downloaded = await recordedTask(
    store,
    "2026-11-19T10:00:00.000Z",
    [
      { identifier: N(1), values: ["EE", "mobile", "no"] },
      { identifier: N(4), values: ["Three", "mobile", "yes"] },
    ],
    CARRIER_COLUMNS,
    OTHER_SCOPE,
  );
  return { done, uploading, processing, recording, downloaded };
}

/** A task as another store would have it: everything but its reference. */
const withoutRef = ({ ref: _ref, ...task }: TaskRecord) => task;

describe.each(targets)("importing a local store into %s", (_, openTarget) => {
  it("copies runs, tasks with their keys and states, and recorded results with their dates; a second import copies nothing", async () => {
    const local = localStore();
    const history = await localHistory(local);
    const target = await openTarget();
    // The target's own task: the imported ones get other references than they had.
    await recordedTask(target, "2026-11-25T10:00:00.000Z", [{ identifier: N(9), values: ["true"] }]);
    const localResults = await local.ledger.lookup([N(1)]);

    expect(await importStore(local, target)).toEqual({ runs: 2, abandoned: 0, tasks: 5, results: 4, erased: 4 });
    // Moved, not copied: no second copy of the numbers stays on this machine; its history does.
    expect(await local.ledger.lookup([N(1), N(2), N(4)])).toEqual([]);
    expect((await local.ledger.stats()).results).toBe(0);
    expect(await local.runs.get("r-done")).toBeDefined();

    for (const id of ["r-done", "r-open"]) expect(await target.runs.get(id)).toEqual(await local.runs.get(id));
    expect((await target.runs.get("r-open"))?.lease).toMatchObject(LEASE);
    expect((await target.tasks.ofRun("r-open")).map(withoutRef)).toEqual((await local.tasks.ofRun("r-open")).map(withoutRef));
    const done = (await target.tasks.withKey(SCOPE, "r-done/0"))!;
    expect(done.ref).not.toBe(history.done.ref);
    expect(withoutRef(done)).toEqual(withoutRef((await local.tasks.withKey(SCOPE, "r-done/0"))!));
    expect(done.recordedAt).toBe("2026-11-20T10:01:00.000Z");
    expect(await target.ledger.lookup([N(1)])).toEqual(localResults);
    expect((await target.ledger.lookup([N(4)]))[0]).toMatchObject({
      scope: OTHER_SCOPE,
      product: "number_activity_batch",
      values: { carrier: "Three", ported: "yes" },
    });
    // Reused under the target's own reference of the task, as of its check.
    expect(await collect(target.ledger.latest(SCOPE, "number_activity_batch"))).toEqual([
      { identifier: Number(N(9)), taskRef: 1 },
      { identifier: Number(N(1)), taskRef: done.ref },
      { identifier: Number(N(2)), taskRef: done.ref },
    ]);
    // The result still being recorded here is not in the ledger there yet.
    expect(await target.ledger.lookup([N(3)])).toEqual([]);
    const results = (await target.ledger.stats()).results;

    expect(await importStore(local, target)).toEqual({ runs: 0, abandoned: 0, tasks: 0, results: 0, erased: 0 });
    expect((await target.ledger.stats()).results).toBe(results);

    // Once this machine has recorded it (and its upload got a task), the next import brings both.
    await recordRows(
      local.ledger,
      history.recording.ref,
      ["activated"],
      [{ identifier: N(3), values: ["true"] }],
      "2026-11-21T10:01:00.000Z",
    );
    await local.tasks.update(history.uploading.ref, { taskId: "t5", status: "processing" });
    expect(await importStore(local, target)).toEqual({ runs: 0, abandoned: 0, tasks: 0, results: 1, erased: 1 });
    expect((await target.ledger.lookup([N(3)])).map((row) => [row.taskId, row.checkedAt])).toEqual([["t4", "2026-11-21T10:00:00.000Z"]]);
    expect((await target.tasks.withKey(SCOPE, "r-open/0"))?.taskId).toBe("t5");
  });

  it("copies an open run as abandoned when the same command has an open run in the target, with its tasks and results", async () => {
    const local = localStore();
    await local.runs.create(newRun({ id: "r-mine" }), LEASE);
    const task = await local.tasks.add({
      scope: SCOPE,
      runId: "r-mine",
      part: 0,
      parts: 1,
      product: "number_activity_batch",
      idempotencyKey: "r-mine/0",
    });
    await local.tasks.update(task.ref, { taskId: "t1", status: "success", checkedAt: "2026-11-20T10:00:00.000Z" });
    await recordRows(local.ledger, task.ref, ["activated"], [{ identifier: N(1), values: ["true"] }], "2026-11-20T10:01:00.000Z");
    const target = await openTarget();
    await target.runs.create(newRun({ id: "r-team" }), { host: "cron", pid: 7, nonce: "z" });

    expect(await importStore(local, target)).toEqual({ runs: 1, abandoned: 1, tasks: 1, results: 1, erased: 1 });
    expect((await target.runs.open(SCOPE, "same-command"))?.id).toBe("r-team");
    const mine = (await target.runs.get("r-mine"))!;
    expect(mine).toMatchObject({ state: "abandoned", note: "Imported while run r-team of the same command was open." });
    expect(mine.lease).toBeUndefined();
    expect((await target.ledger.lookup([N(1)])).map((row) => row.taskId)).toEqual(["t1"]);
    expect(await importStore(local, target)).toEqual({ runs: 0, abandoned: 0, tasks: 0, results: 0, erased: 0 });
  });

  it("completes an import cut short (the target went away while recording a task) without doubling a row", async () => {
    const local = localStore();
    const rows = Array.from({ length: 12_000 }, (_, i) => ({ identifier: N(i), values: ["true"] }));
    await recordedTask(local, "2026-11-20T10:00:00.000Z", rows);
    const target = await openTarget();
    const bound = <T extends object>(object: T, name: string | symbol): unknown => {
      const value: unknown = Reflect.get(object, name, object);
      return typeof value === "function" ? value.bind(object) : value;
    };
    const ledger = new Proxy(target.ledger, {
      get: (part, name) => (name === "record" ? () => Promise.reject(new Error("the connection was lost")) : bound(part, name)),
    });
    const cutShort = new Proxy(target, { get: (store, name) => (name === "ledger" ? ledger : bound(store, name)) });
    await expect(importStore(local, cutShort)).rejects.toThrow("the connection was lost");
    expect((await target.ledger.stats()).results).toBe(0);
    // An import cut short erases nothing here.
    expect((await local.ledger.stats()).results).toBe(12_000);

    expect(await importStore(local, target)).toEqual({ runs: 0, abandoned: 0, tasks: 0, results: 12_000, erased: 12_000 });
    expect((await local.ledger.stats()).results).toBe(0);
    expect(await target.ledger.stats()).toMatchObject({ results: 12_000, numbers: 12_000, tasks: 1 });
  });
  it("carries over what ledger forget remembers for an open run, so the run carried on in the target leaves the number out too", async () => {
    const local = localStore();
    const { processing } = await localHistory(local);
    await local.tasks.addNumbers(processing.ref, [Number(N(5)), Number(N(6))]);
    // Forgotten while r-open may still record task t2's result: remembered as hashes for it.
    expect(await local.ledger.forget([N(5)])).toMatchObject({ remembered: 1 });
    const target = await openTarget();
    await importStore(local, target);
    const there = (await target.tasks.withKey(SCOPE, "r-open/1"))!;
    const erased = await target.ledger.erasedSince(there.ref);
    expect([erased?.has(Number(N(5))), erased?.has(Number(N(6)))]).toEqual([true, false]);
    // Imported again, it is remembered once.
    await importStore(local, target);
    expect(await target.ledger.erasures()).toHaveLength(1);
    expect((await target.ledger.erasures())[0]).toMatchObject({ hashes: [expect.stringMatching(/^[0-9a-f]{64}$/) as unknown] });
  });
});

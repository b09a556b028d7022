import { afterEach, describe, expect, it } from "vitest";
import type { Lease, NewRun, RunFilter, Scope, Store, TaskPatch } from "../../src/store/store.js";
import { cutShortAt, keyOrdered, recordRows, type TestRow } from "../helpers/ledger-rows.js";

/**
 * What every store does, whatever its engine: each store's test file runs these against
 * its own (sqlite-store.test.ts, postgres-store.test.ts), beside the checks only its engine
 * needs.
 */

export const SCOPE: Scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };
export const OTHER_SCOPE: Scope = { baseUrl: "https://api.example.com", profile: "default" };
export const LEASE: Lease = { host: "here", pid: 1, nonce: "a" };

/** A store with its schema version, as both stores show it. */
export type VersionedStore = Store & { readonly schemaVersion: number };

export interface StoreFixture {
  /** Where an empty store can be opened: a new directory, or a database emptied for the test. */
  emptyLocation(): Promise<string>;
  open(location: string): Promise<VersionedStore>;
}

export function newRun(overrides: Partial<NewRun> = {}): NewRun {
  return {
    id: "r1",
    scope: SCOPE,
    identity: "same-command",
    kind: "submit",
    state: "open",
    startedAt: "2026-11-27T10:00:00.000Z",
    product: "number_activity_batch",
    country: "GB",
    source: { path: "/data/crm.csv", size: 10, sha256: "ab" },
    settings: { column: { index: 0 } },
    ...overrides,
  };
}

/** A finished task of `product` in `scope`, checked at `checkedAt`, with these results. */
export async function recordedTask(store: Store, checkedAt: string, rows: TestRow[], columns = ["activated"], scope = SCOPE) {
  const task = await store.tasks.add({ scope, product: "number_activity_batch", taskId: `t-${checkedAt}`, submittedAt: checkedAt });
  await store.tasks.update(task.ref, { status: "success", checkedAt });
  await recordRows(store.ledger, task.ref, columns, rows, checkedAt);
  return task;
}

export async function collect<T>(iterable: AsyncIterable<readonly T[]>): Promise<T[]> {
  const all: T[] = [];
  for await (const batch of iterable) all.push(...batch);
  return all;
}

/** Registers the contract's tests (inside the caller's describe). */
export function storeContract(fixture: StoreFixture): void {
  const opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  const open = async (location: string) => {
    const store = await fixture.open(location);
    opened.push(store);
    return store;
  };
  const openStore = async () => open(await fixture.emptyLocation());

  describe("runs and their leases", () => {
    it("runs its migrations once: a second open finds the schema at its version", async () => {
      const location = await fixture.emptyLocation();
      const first = await open(location);
      expect(first.schemaVersion).toBe(4);
      await first.runs.create(newRun(), LEASE);
      const second = await open(location);
      expect(second.schemaVersion).toBe(4);
      expect((await second.runs.get("r1"))?.identity).toBe("same-command");
    });

    it("keeps one open run per command and scope: a second run of the same command is refused while the first is open", async () => {
      const store = await openStore();
      expect(await store.runs.create(newRun(), LEASE)).not.toBe("exists");
      expect(await store.runs.create(newRun({ id: "r2" }), LEASE)).toBe("exists");
      expect(await store.runs.create(newRun({ id: "r3", scope: OTHER_SCOPE }), LEASE)).not.toBe("exists");
      await store.runs.update("r1", { state: "finished", finishedAt: "2026-11-27T11:00:00.000Z" });
      expect(await store.runs.open(SCOPE, "same-command")).toBeUndefined();
      expect(await store.runs.create(newRun({ id: "r4" }), LEASE)).not.toBe("exists");
      expect((await store.runs.open(SCOPE, "same-command"))?.id).toBe("r4");
    });

    it("gives a run's lease to one live process at a time, and takes it from a stale or dead holder", async () => {
      const store = await openStore();
      await store.runs.create(newRun(), LEASE);
      const other: Lease = { host: "here", pid: 2, nonce: "b" };
      const now = "2026-11-27T10:00:30.000Z";
      expect(await store.runs.claim("r1", other, now, "2026-11-27T09:59:00.000Z", () => true)).toEqual(LEASE);
      expect(await store.runs.claim("r1", other, now, "2026-11-27T09:59:00.000Z", () => false)).toBeUndefined();
      expect((await store.runs.get("r1"))?.lease).toEqual({ ...other, heartbeatAt: now });
      expect(await store.runs.claim("r1", LEASE, now, "2026-11-27T10:01:00.000Z", () => true)).toBeUndefined();
      await store.runs.release("r1", LEASE);
      expect((await store.runs.get("r1"))?.lease).toBeUndefined();
    });

    it("finds a run by a prefix of its id only when the prefix names one run", async () => {
      const store = await openStore();
      await store.runs.create(newRun({ id: "abc1" }), LEASE);
      await store.runs.create(newRun({ id: "abc2", identity: "other" }), LEASE);
      expect(await store.runs.get("abc")).toBeUndefined();
      expect((await store.runs.get("abc2"))?.id).toBe("abc2");
      expect((await store.runs.list({ scope: SCOPE })).map((run) => run.id)).toEqual(["abc2", "abc1"]);
    });

    it("lists the runs of a scope, in a state, started at or after a moment, newest first, at most a limit", async () => {
      const store = await openStore();
      const runs = [
        newRun({ id: "r1", identity: "a", state: "open", startedAt: "2026-11-27T10:00:00.000Z" }),
        newRun({ id: "r2", identity: "b", state: "finished", startedAt: "2026-11-27T11:00:00.000Z" }),
        newRun({ id: "r3", identity: "c", state: "failed", startedAt: "2026-11-27T12:00:00.000Z", scope: OTHER_SCOPE }),
        newRun({ id: "r4", identity: "d", state: "failed", startedAt: "2026-11-27T13:00:00.000Z" }),
      ];
      for (const run of runs) await store.runs.create(run, LEASE);
      const ids = async (filter: RunFilter) => (await store.runs.list(filter)).map((run) => run.id);
      expect(await ids({})).toEqual(["r4", "r3", "r2", "r1"]);
      expect(await ids({ scope: SCOPE })).toEqual(["r4", "r2", "r1"]);
      expect(await ids({ state: "failed" })).toEqual(["r4", "r3"]);
      expect(await ids({ scope: SCOPE, state: "failed" })).toEqual(["r4"]);
      expect(await ids({ since: "2026-11-27T11:00:00.000Z" })).toEqual(["r4", "r3", "r2"]);
      expect(await ids({ scope: OTHER_SCOPE, since: "2026-11-27T12:00:00.001Z" })).toEqual([]);
      expect(await ids({ scope: SCOPE, since: "2026-11-27T10:00:00.000Z", limit: 2 })).toEqual(["r4", "r2"]);
      expect(await ids({ scope: SCOPE, state: "open", since: "2026-11-27T10:00:00.001Z" })).toEqual([]);
    });

    it("copies a run from another store as it was, once, and lists every task in the order it was added, a page at a time", async () => {
      const store = await openStore();
      const copied = {
        ...newRun({ id: "r-copied", state: "finished" }),
        finishedAt: "2026-11-27T11:00:00.000Z",
        host: "laptop",
        user: "ana",
        plan: { parts: 1 },
        note: "from a laptop",
      };
      expect(await store.runs.copy(copied)).toBe(true);
      expect(await store.runs.copy({ ...copied, note: "again" })).toBe(false);
      expect(await store.runs.get("r-copied")).toEqual(copied);
      const leased = { ...newRun({ id: "r-leased" }), lease: { ...LEASE, heartbeatAt: "2026-11-27T10:00:05.000Z" } };
      expect(await store.runs.copy(leased)).toBe(true);
      expect(await store.runs.get("r-leased")).toEqual(leased);
      const tasks = [];
      for (const [index, scope] of [SCOPE, OTHER_SCOPE, SCOPE].entries()) {
        tasks.push(await store.tasks.add({ scope, product: "carrier_batch", idempotencyKey: `k${index}` }));
      }
      expect((await store.tasks.after(0, 2)).map((task) => task.idempotencyKey)).toEqual(["k0", "k1"]);
      expect(await store.tasks.after(tasks[1]!.ref, 2)).toEqual([tasks[2]]);
      expect(await store.tasks.after(tasks[2]!.ref, 2)).toEqual([]);
    });
  });

  describe("tasks, their keys and numbers", () => {
    it("dates a task's results by the first check that saw it succeed", async () => {
      const store = await openStore();
      const task = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "k1", count: 500, sha256: "ff" });
      await store.tasks.update(task.ref, { taskId: "t1", status: "success", checkedAt: "2026-11-27T10:00:00.000Z" });
      await store.tasks.update(task.ref, { status: "success", checkedAt: "2026-11-28T10:00:00.000Z" });
      expect(await store.tasks.withKey(SCOPE, "k1")).toMatchObject({ taskId: "t1", checkedAt: "2026-11-27T10:00:00.000Z", count: 500 });
      expect(await store.tasks.withKey(OTHER_SCOPE, "k1")).toBeUndefined();
      expect((await store.tasks.byId(SCOPE, "t1"))?.ref).toBe(task.ref);
    });

    it("counts the uploads under way (since a moment) and the tasks not yet seen finished", async () => {
      const store = await openStore();
      const a = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "a" });
      const b = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "b" });
      const c = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "c" });
      await store.tasks.markUploading(a.ref, "2026-11-27T10:00:00.000Z");
      await store.tasks.markUploading(b.ref, "2026-11-27T09:00:00.000Z");
      await store.tasks.markUploading(c.ref, "2026-11-27T10:00:00.000Z");
      await store.tasks.update(c.ref, { taskId: "tc", status: "processing" });
      expect(await store.tasks.activity(SCOPE, "2026-11-27T09:30:00.000Z")).toEqual({ uploading: 1, unfinished: 1 });
      await store.tasks.update(c.ref, { status: "success", checkedAt: "2026-11-27T10:05:00.000Z" });
      await store.tasks.markUploading(a.ref, undefined);
      expect(await store.tasks.activity(SCOPE, "2026-11-27T09:30:00.000Z")).toEqual({ uploading: 0, unfinished: 0 });
      expect(await store.tasks.activity(OTHER_SCOPE, "2026-11-27T09:30:00.000Z")).toEqual({ uploading: 0, unfinished: 0 });
    });

    it("sums the tasks not yet seen finished per product, with their numbers: what the service holds reserved for them", async () => {
      const store = await openStore();
      const task = async (product: string, key: string, patch: TaskPatch, count?: number, scope = SCOPE) => {
        const added = await store.tasks.add({ scope, product, idempotencyKey: key, ...(count === undefined ? {} : { count }) });
        await store.tasks.update(added.ref, patch);
      };
      await task("carrier_batch", "a", { taskId: "ta", status: "processing" }, 500);
      await task("carrier_batch", "b", { taskId: "tb" }, 700); // created, never checked since
      await task("carrier_batch", "c", { taskId: "tc", status: "success", checkedAt: "2026-11-27T10:05:00.000Z" }, 900);
      await task("carrier_batch", "d", {}, 300); // written before its upload, no task yet
      await task("number_activity_batch", "e", { taskId: "te", status: "processing", total: 40 }); // no count recorded: the service's total
      await task("number_activity_batch", "f", { taskId: "tf", status: "failed" }, 10);
      await task("carrier_batch", "g", { taskId: "tg", status: "processing" }, 5000, OTHER_SCOPE);
      expect(await store.tasks.unfinished(SCOPE)).toEqual([
        { product: "carrier_batch", tasks: 2, numbers: 1200 },
        { product: "number_activity_batch", tasks: 1, numbers: 40 },
      ]);
      expect(await store.tasks.unfinished({ baseUrl: "https://elsewhere.example", profile: "default" })).toEqual([]);
      // store status counts every scope's: six given to the service (d never was), four of them unfinished.
      expect(await store.tasks.counts()).toEqual({ submitted: 6, unfinished: 4 });
    });

    it("keeps a task's numbers once, and which tasks may answer for their numbers", async () => {
      const store = await openStore();
      const inFlight = await store.tasks.add({
        scope: SCOPE,
        product: "number_activity_batch",
        taskId: "t-flying",
        submittedAt: "2026-11-27T10:00:00.000Z",
      });
      const numbers = Array.from({ length: 12_000 }, (_, i) => 447400100000 + ((i * 7919) % 12_000));
      await store.tasks.addNumbers(inFlight.ref, numbers);
      await store.tasks.addNumbers(inFlight.ref, numbers.slice(0, 10));
      expect((await collect(store.tasks.numbers(inFlight.ref))).sort((a, b) => a - b)).toEqual([...numbers].sort((a, b) => a - b));
      const answered = await recordedTask(store, "2026-11-26T10:00:00.000Z", [{ identifier: "447400200001", values: ["true"] }]);
      await store.tasks.addNumbers(answered.ref, [447400200001, 447400200002]);
      expect(await collect(store.tasks.numbers(answered.ref))).toEqual([447400200001, 447400200002]);
      // A task not yet created at the service, another product's, and one after the reference are not answering.
      await store.tasks.add({ scope: SCOPE, product: "number_activity_batch", idempotencyKey: "k" });
      await store.tasks.add({ scope: SCOPE, product: "carrier_batch", taskId: "t-carrier" });
      const asOf = await store.tasks.maxRef();
      await store.tasks.add({ scope: SCOPE, product: "number_activity_batch", taskId: "t-later" });
      const answering = await store.tasks.answering(SCOPE, "number_activity_batch", asOf);
      expect(answering.map((task) => task.taskId).sort()).toEqual(["t-2026-11-26T10:00:00.000Z", "t-flying"]);
      expect(await store.tasks.answering(OTHER_SCOPE, "number_activity_batch", asOf)).toEqual([]);
      // Forgetting a number erases it from the tasks' numbers too; pruning erases the numbers of tasks checked before the date.
      await store.ledger.forget(["447400200002"]);
      expect(await collect(store.tasks.numbers(answered.ref))).toEqual([447400200001]);
      await store.ledger.prune("2026-11-28T00:00:00.000Z");
      expect(await collect(store.tasks.numbers(answered.ref))).toEqual([]);
      await store.ledger.forget(["447400100005"]);
      const left = (await collect(store.tasks.numbers(inFlight.ref))).sort((a, b) => a - b);
      expect(left).toEqual([...numbers].sort((a, b) => a - b).filter((number) => number !== 447400100005));
      // The numbers are kept in chunks of 4,096 as given: a forget that empties the first, and one that takes a number from each of the others.
      const gone = new Set([...numbers.slice(0, 4096), numbers[5000]!, numbers[9000]!]);
      await store.ledger.forget([...gone].map(String));
      expect((await collect(store.tasks.numbers(inFlight.ref))).sort((a, b) => a - b)).toEqual(left.filter((number) => !gone.has(number)));
      // Another product's forget leaves them.
      const kept = numbers[4096]!;
      await store.ledger.forget([String(kept)], { product: "carrier_batch" });
      expect(await collect(store.tasks.numbers(inFlight.ref))).toContain(kept);
      await store.ledger.forget([String(kept)], { product: "number_activity_batch" });
      expect(await collect(store.tasks.numbers(inFlight.ref))).not.toContain(kept);
    });

    it("counts the parts of an open run without a task id as claims that may answer, and says whether a product had a task added since a reference", async () => {
      const store = await openStore();
      const asOf = await store.tasks.maxRef();
      expect(await store.tasks.addedAfter(SCOPE, "number_activity_batch", asOf)).toBe(false);
      await store.runs.create(newRun({ id: "claiming" }), LEASE);
      await store.runs.create(newRun({ id: "gone", identity: "other", state: "abandoned" }), LEASE);
      const claim = await store.tasks.add({ scope: SCOPE, runId: "claiming", product: "number_activity_batch", idempotencyKey: "c1" });
      await store.tasks.add({ scope: SCOPE, runId: "gone", product: "number_activity_batch", idempotencyKey: "c2" });
      const answering = await store.tasks.answering(SCOPE, "number_activity_batch", await store.tasks.maxRef());
      expect(answering.map((task) => task.ref)).toEqual([claim.ref]);
      expect(await store.tasks.addedAfter(SCOPE, "number_activity_batch", asOf)).toBe(true);
      expect(await store.tasks.addedAfter(SCOPE, "carrier_batch", asOf)).toBe(false);
      expect(await store.tasks.addedAfter(OTHER_SCOPE, "number_activity_batch", asOf)).toBe(false);
      expect(await store.tasks.addedAfter(SCOPE, "number_activity_batch", await store.tasks.maxRef())).toBe(false);
    });

    it("lets claims of one product take turns: one begun while another is under way starts after it commits, and sees its writes", async () => {
      const store = await openStore();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const order: string[] = [];
      const first = store.claim(SCOPE, "carrier_batch", async ({ tasks }) => {
        order.push("first begins");
        await tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "first" });
        await held;
        order.push("first ends");
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = store.claim(SCOPE, "carrier_batch", async ({ tasks }) => {
        order.push("second begins");
        return tasks.withKey(SCOPE, "first");
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(order).toEqual(["first begins"]);
      release();
      await first;
      expect((await second)?.idempotencyKey).toBe("first");
      expect(order).toEqual(["first begins", "first ends", "second begins"]);
    });

    it("keeps a run's tasks in part order, updates what a patch gives, and lists tasks with an id newest first", async () => {
      const store = await openStore();
      await store.runs.create(newRun(), LEASE);
      const second = await store.tasks.add({
        scope: SCOPE,
        runId: "r1",
        part: 1,
        parts: 2,
        product: "carrier_batch",
        idempotencyKey: "k2",
      });
      const first = await store.tasks.add({ scope: SCOPE, runId: "r1", part: 0, parts: 2, product: "carrier_batch", idempotencyKey: "k1" });
      await store.tasks.update(first.ref, { taskId: "t1", replayed: true, staged: { file: "/s/t1.csv", bytes: 10, sha256: "cd" } });
      await store.tasks.update(second.ref, { taskId: "t2", replayed: false });
      expect((await store.tasks.ofRun("r1")).map((task) => [task.part, task.taskId, task.replayed])).toEqual([
        [0, "t1", true],
        [1, "t2", false],
      ]);
      expect((await store.tasks.ofRun("r1"))[0]).toMatchObject({
        staged: { file: "/s/t1.csv", bytes: 10, sha256: "cd" },
        parts: 2,
        runId: "r1",
      });
      expect((await store.tasks.recent(SCOPE, 1)).map((task) => task.taskId)).toEqual(["t1"]);
      expect((await store.tasks.recent(SCOPE, Infinity)).map((task) => task.taskId)).toEqual(["t1", "t2"]);
      await store.runs.update("r1", { plan: { parts: [1, 2] }, output: { path: "/o.csv" }, note: "why" });
      expect(await store.runs.get("r1")).toMatchObject({ plan: { parts: [1, 2] }, output: { path: "/o.csv" }, note: "why", state: "open" });
      expect((await store.runs.list({ limit: 1 })).map((run) => run.id)).toEqual(["r1"]);
    });
    it("forgets the staged result and the date of a part's first task when the part gets another task id, and keeps them for the same id", async () => {
      const store = await openStore();
      const part = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "k1" });
      await store.tasks.markUploading(part.ref, "2026-11-27T10:00:00.000Z");
      await store.tasks.update(part.ref, { taskId: "t1" });
      await store.tasks.update(part.ref, {
        status: "success",
        checkedAt: "2026-11-27T10:05:00.000Z",
        staged: { file: "/s/t1.csv", bytes: 1, sha256: "a" },
      });
      expect(await store.tasks.activity(SCOPE, "")).toEqual({ uploading: 0, unfinished: 0 });
      await store.tasks.update(part.ref, { taskId: "t1", status: "success" });
      expect(await store.tasks.withKey(SCOPE, "k1")).toMatchObject({
        taskId: "t1",
        checkedAt: "2026-11-27T10:05:00.000Z",
        staged: { file: "/s/t1.csv" },
      });
      // The service forgot t1: the part was uploaded again and is another task, not yet checked or staged.
      await store.tasks.update(part.ref, { taskId: "t2", status: "processing" });
      const again = await store.tasks.withKey(SCOPE, "k1");
      expect(again).toMatchObject({ taskId: "t2", status: "processing" });
      expect(again?.checkedAt).toBeUndefined();
      expect(again?.staged).toBeUndefined();
    });
  });

  describe("the ledger", () => {
    it("records a task's rows once, with the columns the service added, and reads them back", async () => {
      const store = await openStore();
      const columns = ["carrier", "underlying_carrier", "number_type", "country_code", "region", "city", "ported"];
      const rows = [
        { identifier: "447400100001", values: ["EE", "EE", "mobile", "GB", "", "", "no"] },
        { identifier: "447400100002", values: ["Three", "Three", "mobile", "GB", "England", "London", "yes"] },
        { identifier: "not-a-number", values: ["x", "", "", "", "", "", ""] },
      ];
      const task = await recordedTask(store, "2026-11-27T10:00:00.000Z", rows, columns);
      await recordRows(store.ledger, task.ref, columns, rows, "2026-11-27T10:01:00.000Z");
      const back = await collect(store.ledger.ofTask(task.ref));
      expect(back).toHaveLength(2);
      expect(back[1]).toMatchObject({
        identifier: "447400100002",
        checkedAt: "2026-11-27T10:00:00.000Z",
        values: { carrier: "Three", region: "England", city: "London", ported: "yes" },
      });
    });

    it("lists every result newest first, within a product and scope, as of a task reference", async () => {
      const store = await openStore();
      const old = await recordedTask(store, "2026-11-20T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
      const recent = await recordedTask(store, "2026-11-26T10:00:00.000Z", [
        { identifier: "447400100001", values: ["false"] },
        { identifier: "447400100002", values: ["true"] },
      ]);
      await recordedTask(store, "2026-11-26T11:00:00.000Z", [{ identifier: "447400100003", values: ["true"] }], ["activated"], OTHER_SCOPE);
      const latest = await collect(store.ledger.latest(SCOPE, "number_activity_batch"));
      expect(latest).toEqual([
        { identifier: 447400100001, taskRef: recent.ref },
        { identifier: 447400100002, taskRef: recent.ref },
        { identifier: 447400100001, taskRef: old.ref },
      ]);
      expect(await collect(store.ledger.latest(SCOPE, "number_activity_batch", old.ref))).toEqual([
        { identifier: 447400100001, taskRef: old.ref },
      ]);
      expect(await collect(store.ledger.latest(SCOPE, "carrier_batch"))).toEqual([]);
    });

    it("pairs each result with the same number's latest earlier result", async () => {
      const store = await openStore();
      await recordedTask(store, "2026-11-20T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
      await recordedTask(store, "2026-11-21T10:00:00.000Z", [{ identifier: "447400100001", values: ["false"] }]);
      const latest = await recordedTask(store, "2026-11-22T10:00:00.000Z", [
        { identifier: "447400100001", values: ["true"] },
        { identifier: "447400100009", values: ["true"] },
      ]);
      const pairs = await collect(store.ledger.previous(latest.ref));
      expect(pairs).toHaveLength(1);
      expect(pairs[0]!.current.values).toEqual({ activated: "true" });
      expect(pairs[0]!.previous).toMatchObject({ checkedAt: "2026-11-21T10:00:00.000Z", values: { activated: "false" } });
    });

    it("prunes results checked before a date and counts what is left", async () => {
      const store = await openStore();
      await recordedTask(store, "2026-05-01T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
      await recordedTask(store, "2026-11-21T10:00:00.000Z", [
        { identifier: "447400100001", values: ["false"] },
        { identifier: "447400100002", values: ["true"] },
      ]);
      expect(await store.ledger.prune("2026-06-01T00:00:00.000Z", { dryRun: true })).toEqual({ results: 1 });
      expect((await store.ledger.stats()).results).toBe(3);
      expect(await store.ledger.prune("2026-06-01T00:00:00.000Z")).toEqual({ results: 1 });
      const stats = await store.ledger.stats();
      expect(stats).toMatchObject({ results: 2, numbers: 2, oldest: "2026-11-21T10:00:00.000Z", newest: "2026-11-21T10:00:00.000Z" });
      expect(stats.groups).toEqual([
        {
          scope: SCOPE,
          product: "number_activity_batch",
          results: 2,
          numbers: 2,
          oldest: "2026-11-21T10:00:00.000Z",
          newest: "2026-11-21T10:00:00.000Z",
        },
      ]);
    });

    it("forgets every result of the given numbers (stored digits; other forms are ignored) and nothing else", async () => {
      const store = await openStore();
      const rows = Array.from({ length: 3000 }, (_, i) => ({ identifier: String(447400100000 + i), values: ["true"] }));
      await recordedTask(store, "2026-11-20T10:00:00.000Z", rows);
      await recordedTask(store, "2026-11-21T10:00:00.000Z", rows.slice(1000, 1100));
      expect(await store.ledger.forget(["447400101042"], { dryRun: true })).toEqual({ results: 2 });
      expect(await store.ledger.lookup(["447400101042"])).toHaveLength(2);
      expect(await store.ledger.forget(["447400101042", "+44 7400 101043", "447400109999"])).toEqual({ results: 2 });
      expect(await store.ledger.lookup(["447400101042"])).toEqual([]);
      expect(await store.ledger.lookup(["447400101044"])).toHaveLength(2);
      expect((await store.ledger.stats()).results).toBe(3098);
    });

    it("forgets a number's results of one product only when given --product, and a task's results when told which", async () => {
      const store = await openStore();
      const number = [{ identifier: "447400100001", values: ["true"] }];
      await recordedTask(store, "2026-11-20T10:00:00.000Z", number);
      const carrier = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", taskId: "t-carrier" });
      await store.tasks.update(carrier.ref, { status: "success", checkedAt: "2026-11-21T10:00:00.000Z" });
      await recordRows(
        store.ledger,
        carrier.ref,
        ["carrier"],
        [{ identifier: "447400100001", values: ["EE"] }],
        "2026-11-21T10:00:00.000Z",
      );
      expect(await store.ledger.forget(["447400100001"], { product: "carrier_batch" })).toEqual({ results: 1 });
      expect((await store.ledger.lookup(["447400100001"])).map((row) => row.product)).toEqual(["number_activity_batch"]);
      const other = await recordedTask(store, "2026-11-22T10:00:00.000Z", [{ identifier: "447400100002", values: ["true"] }]);
      expect(await store.ledger.forgetTasks([other.ref])).toEqual({ results: 1 });
      expect(await store.ledger.lookup(["447400100002"])).toEqual([]);
      expect(await store.ledger.lookup(["447400100001"])).toHaveLength(1);
    });

    it("remembers a number it forgets, hashed, for the tasks of runs open then (of its product), until those runs end", async () => {
      const store = await openStore();
      const forgotten = 447400100001;
      // Nothing open: nothing to remember.
      expect(await store.ledger.forget([String(forgotten)])).toEqual({ results: 0 });
      await store.runs.create(newRun(), LEASE);
      const open = await store.tasks.add({ scope: SCOPE, runId: "r1", part: 0, parts: 1, product: "number_activity_batch", taskId: "t1" });
      expect(await store.ledger.erasedSince(open.ref)).toBeUndefined();

      expect(await store.ledger.forget([String(forgotten), "447400100002"], { dryRun: true })).toEqual({ results: 0 });
      expect(await store.ledger.erasedSince(open.ref)).toBeUndefined();
      expect(await store.ledger.forget([String(forgotten), "447400100002", "not a number", String(forgotten)])).toEqual({
        results: 0,
        remembered: 2,
      });
      expect(await store.ledger.forget(["447400100003"], { product: "carrier_batch" })).toEqual({ results: 0, remembered: 1 });
      const erased = await store.ledger.erasedSince(open.ref);
      expect([forgotten, 447400100002, 447400100003, 447400100004].map((number) => erased?.has(number))).toEqual([
        true,
        true,
        false,
        false,
      ]);
      // A task given its numbers after the forget (a run started since) is not held to it.
      const later = await store.tasks.add({ scope: SCOPE, product: "number_activity_batch", taskId: "t2" });
      expect(await store.ledger.erasedSince(later.ref)).toBeUndefined();

      expect(await store.ledger.dropSpentErasures()).toBe(0);
      // Abandoned with a task neither recorded nor failed: its result is still collected, so the run is held to it.
      await store.runs.update("r1", { state: "abandoned" });
      expect(await store.ledger.dropSpentErasures()).toBe(0);
      await store.tasks.update(open.ref, { status: "failed" });
      expect(await store.ledger.dropSpentErasures()).toBe(2);
      expect(await store.ledger.erasedSince(open.ref)).toBeUndefined();
    });

    it("looks numbers up newest first, within a filter", async () => {
      const store = await openStore();
      await recordedTask(store, "2026-11-20T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
      await recordedTask(store, "2026-11-22T10:00:00.000Z", [{ identifier: "447400100001", values: ["false"] }]);
      await recordedTask(store, "2026-11-23T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }], ["activated"], OTHER_SCOPE);
      const all = await store.ledger.lookup(["447400100001", "not-a-number"]);
      expect(all.map((row) => [row.checkedAt, row.scope.baseUrl, row.values.activated])).toEqual([
        ["2026-11-23T10:00:00.000Z", OTHER_SCOPE.baseUrl, "true"],
        ["2026-11-22T10:00:00.000Z", SCOPE.baseUrl, "false"],
        ["2026-11-20T10:00:00.000Z", SCOPE.baseUrl, "true"],
      ]);
      const filtered = await store.ledger.lookup(["447400100001"], {
        scope: SCOPE,
        product: "number_activity_batch",
        since: "2026-11-21T00:00:00.000Z",
      });
      expect(filtered.map((row) => row.checkedAt)).toEqual(["2026-11-22T10:00:00.000Z"]);
      expect(filtered[0]).toMatchObject({
        identifier: "447400100001",
        product: "number_activity_batch",
        taskId: "t-2026-11-22T10:00:00.000Z",
      });
    });

    it("exports results task by task, oldest first, and reads one task's rows for given numbers", async () => {
      const store = await openStore();
      const older = await recordedTask(store, "2026-11-20T10:00:00.000Z", [
        { identifier: "447400100002", values: ["true"] },
        { identifier: "447400100001", values: ["false"] },
      ]);
      await recordedTask(store, "2026-11-21T10:00:00.000Z", [{ identifier: "447400100003", values: ["true"] }], ["activated"], OTHER_SCOPE);
      expect((await collect(store.ledger.export({}))).map((row) => row.identifier)).toEqual([
        "447400100001",
        "447400100002",
        "447400100003",
      ]);
      expect((await collect(store.ledger.export({ scope: OTHER_SCOPE }))).map((row) => row.identifier)).toEqual(["447400100003"]);
      expect(await collect(store.ledger.export({ since: "2026-11-22T00:00:00.000Z" }))).toEqual([]);
      expect((await collect(store.ledger.ofTask(older.ref, new Set([447400100002])))).map((row) => row.values)).toEqual([
        { activated: "true" },
      ]);
      expect(await store.tasks.checkedAt([older.ref, 999_999])).toEqual(new Map([[older.ref, "2026-11-20T10:00:00.000Z"]]));
      expect(await store.tasks.maxRef()).toBeGreaterThan(older.ref);
    });

    it("keeps any text a service sends exactly: quotes, backslashes, separators, braces, NULL, line breaks, emoji and NUL", async () => {
      const store = await openStore();
      const awkward = [
        'Say "hi"',
        "back\\slash\\",
        "\\N",
        "a,b;c\tt",
        "{braces}",
        "NULL",
        "line\nbreak\r\n",
        "Ünïcødé 📱",
        "",
        "nul\0byte",
        "\0",
      ];
      const columns = ["carrier", "region", "city", "ported"];
      const rows = awkward.map((value, index) => ({ identifier: String(447400100000 + index), values: [value, value, "", value] }));
      const task = await recordedTask(store, "2026-11-20T10:00:00.000Z", rows, columns);
      const back = await collect(store.ledger.ofTask(task.ref));
      expect(back.map((row) => row.values)).toEqual(awkward.map((value) => ({ carrier: value, region: value, city: "", ported: value })));
    });

    it("recorded, killed, recorded again: counts nothing of the cut recording, then every row once", async () => {
      const store = await openStore();
      const earlier = await recordedTask(store, "2026-11-19T10:00:00.000Z", [{ identifier: "447400100001", values: ["false"] }]);
      const task = await store.tasks.add({
        scope: SCOPE,
        product: "number_activity_batch",
        taskId: "t-cut",
        submittedAt: "2026-11-20T10:00:00.000Z",
      });
      await store.tasks.update(task.ref, { status: "success", checkedAt: "2026-11-20T10:00:00.000Z" });
      // Past the first of SQLite's transactions of 100,000 rows: that one's rows stay behind, unmarked.
      const rows = keyOrdered(
        ["activated"],
        Array.from({ length: 130_000 }, (_, i) => ({ identifier: String(447400100000 + ((i * 7919) % 130_000)), values: ["true"] })),
      );
      await expect(store.ledger.record(task.ref, cutShortAt(rows, 120_000), "2026-11-20T10:01:00.000Z")).rejects.toThrow("killed");
      expect((await store.tasks.byId(SCOPE, "t-cut"))?.recordedAt).toBeUndefined();
      expect(await collect(store.ledger.latest(SCOPE, "number_activity_batch"))).toEqual([
        { identifier: 447400100001, taskRef: earlier.ref },
      ]);
      expect((await store.ledger.lookup(["447400100001"])).map((row) => row.values.activated)).toEqual(["false"]);
      expect(await store.ledger.stats()).toMatchObject({ results: 1, numbers: 1, tasks: 1, newest: "2026-11-19T10:00:00.000Z" });
      expect(await collect(store.ledger.export({}))).toHaveLength(1);
      // A later result pairs only with results recorded whole: not with a row the cut recording left.
      const later = await recordedTask(store, "2026-11-21T10:00:00.000Z", [{ identifier: "447400100005", values: ["true"] }]);
      expect(await collect(store.ledger.previous(later.ref))).toEqual([]);

      await store.ledger.record(task.ref, rows, "2026-11-20T10:02:00.000Z");
      expect((await store.ledger.stats()).results).toBe(130_002);
      expect((await store.tasks.byId(SCOPE, "t-cut"))?.recordedAt).toBe("2026-11-20T10:02:00.000Z");
      const recorded = await collect(store.ledger.ofTask(task.ref));
      expect(new Set(recorded.map((row) => row.identifier)).size).toBe(130_000);
      expect(recorded).toHaveLength(130_000);
      const pairs = await collect(store.ledger.previous(task.ref));
      expect(pairs.map(({ current, previous }) => [current.identifier, previous.values.activated])).toEqual([["447400100001", "false"]]);
    });

    it("records each row with its own values when thousands of value tuples differ, new ones appearing in a later transaction", async () => {
      const store = await openStore();
      // Past SQLite's first transaction of 100,000 rows, whose tuples the later rows reuse and add to.
      const valuesOf = (i: number) => [`Carrier ${i % 7}`, i < 100_000 ? `City ${i % 3001}` : `Later ${i % 1500}`];
      const rows = Array.from({ length: 110_000 }, (_, i) => ({ identifier: String(447400100000 + i), values: valuesOf(i) }));
      const task = await recordedTask(store, "2026-11-20T10:00:00.000Z", rows, ["carrier", "city"]);
      const back = await collect(store.ledger.ofTask(task.ref));
      expect(back).toHaveLength(110_000);
      const wrong = back.filter((row) => {
        const [carrier, city] = valuesOf(Number(row.identifier) - 447400100000);
        return row.values.carrier !== carrier || row.values.city !== city;
      });
      expect(wrong).toEqual([]);
    });

    it("writes a task's result as CSV lines in number order, quoting what CSV needs, unless a row keeps a value in extra", async () => {
      const store = await openStore();
      const columns = ["carrier", "region", "city"];
      const values = [
        ["Vodafone, UK", 'EE "Ltd"', ""],
        ["line\nbreak\r\n", "plain", "back\\slash"],
        ["Ünïcødé 📱", "", "tab\there"],
      ];
      const rows = values.map((row, i) => ({ identifier: String(447400100003 - i), values: row }));
      const task = await recordedTask(store, "2026-11-20T10:00:00.000Z", rows, columns);
      const csv = (await store.ledger.csvOfTask(task.ref))!;
      let lines = "";
      for await (const piece of csv.lines) lines += piece;
      expect(csv.header).toBe("identifier,carrier,region,city\n");
      expect(lines).toBe(
        '447400100001,Ünïcødé 📱,,tab\there\n447400100002,"line\nbreak\r\n",plain,back\\slash\n447400100003,"Vodafone, UK","EE ""Ltd""",\n',
      );
      // Past one piece (5,000 lines): every line once, in number order.
      const many = Array.from({ length: 12_000 }, (_, i) => ({
        identifier: String(447400200000 + ((i * 7919) % 12_000)),
        values: [`C${i % 7}`, "", ""],
      }));
      const big = await recordedTask(store, "2026-11-22T10:00:00.000Z", many, columns);
      let pieces = 0;
      let text = "";
      for await (const piece of (await store.ledger.csvOfTask(big.ref))!.lines) {
        pieces++;
        text += piece;
      }
      expect(pieces).toBeGreaterThan(1);
      const sorted = [...many].sort((a, b) => Number(a.identifier) - Number(b.identifier));
      expect(text).toBe(sorted.map((row) => `${row.identifier},${row.values[0]},,\n`).join(""));
      const withNul = await recordedTask(
        store,
        "2026-11-21T10:00:00.000Z",
        [{ identifier: "447400100004", values: ["a\0b", "", ""] }],
        columns,
      );
      expect(await store.ledger.csvOfTask(withNul.ref)).toBeUndefined();
    });

    it("records a result a second time (another process recorded it meanwhile) without doubling a row or changing one", async () => {
      const store = await openStore();
      const rows = Array.from({ length: 3000 }, (_, i) => ({
        identifier: String(447400100000 + i),
        values: ["tab\there", "back\\slash\nline"],
      }));
      const task = await recordedTask(store, "2026-11-20T10:00:00.000Z", rows, ["carrier", "region"]);
      await recordRows(store.ledger, task.ref, ["carrier", "region"], rows, "2026-11-20T10:05:00.000Z");
      expect((await store.ledger.stats()).results).toBe(3000);
      const back = await collect(store.ledger.ofTask(task.ref));
      expect(back).toHaveLength(3000);
      expect(back[0]!.values).toEqual({ carrier: "tab\there", region: "back\\slash\nline" });
    });

    it("records a result whose rows came in any order, a number listed twice keeping its first row", async () => {
      const store = await openStore();
      const task = await store.tasks.add({ scope: SCOPE, product: "number_activity_batch", taskId: "t-a" });
      await store.tasks.update(task.ref, { status: "success", checkedAt: "2026-11-20T10:00:00.000Z" });
      const identifiers = Array.from({ length: 12_000 }, (_, i) => String(447400100000 + ((i * 7919) % 12_000)));
      const rows = identifiers.map((identifier) => ({ identifier, values: ["true"] }));
      rows.splice(6000, 0, { identifier: identifiers[0]!, values: ["false"] });
      await recordRows(store.ledger, task.ref, ["activated"], rows, "2026-11-20T10:01:00.000Z");
      const recorded = await collect(store.ledger.ofTask(task.ref));
      expect(recorded.map((row) => row.identifier)).toEqual([...identifiers].sort());
      expect(new Set(recorded.map((row) => row.values.activated))).toEqual(new Set(["true"]));
    });

    it("keeps the first row of a number a result lists twice", async () => {
      const store = await openStore();
      const task = await recordedTask(store, "2026-11-20T10:00:00.000Z", [
        { identifier: "447400100001", values: ["true"] },
        { identifier: "447400100002", values: ["true"] },
        { identifier: "447400100001", values: ["false"] },
      ]);
      expect((await collect(store.ledger.ofTask(task.ref))).map((row) => [row.identifier, row.values.activated])).toEqual([
        ["447400100001", "true"],
        ["447400100002", "true"],
      ]);
    });
  });

  describe("units of work", () => {
    it("commits a unit of work's writes to runs and tasks together", async () => {
      const store = await openStore();
      const ref = await store.transaction(async ({ runs, tasks }) => {
        await runs.create(newRun(), LEASE);
        const task = await tasks.add({ scope: SCOPE, runId: "r1", part: 0, parts: 1, product: "number_activity_batch", taskId: "t1" });
        await tasks.addNumbers(task.ref, [447400100001, 447400100002]);
        await tasks.update(task.ref, { status: "success", checkedAt: "2026-11-27T10:00:00.000Z" });
        return task.ref;
      });
      expect((await store.runs.get("r1"))?.state).toBe("open");
      expect((await store.tasks.ofRun("r1")).map((task) => task.ref)).toEqual([ref]);
      expect(await collect(store.tasks.numbers(ref))).toEqual([447400100001, 447400100002]);
      expect((await store.tasks.byId(SCOPE, "t1"))?.status).toBe("success");
    });

    it("writes nothing of a unit of work that throws, in any part", async () => {
      const store = await openStore();
      const failure = store.transaction(async ({ runs, tasks }) => {
        await runs.create(newRun(), LEASE);
        const task = await tasks.add({ scope: SCOPE, runId: "r1", product: "number_activity_batch", idempotencyKey: "k1", taskId: "t1" });
        await tasks.addNumbers(task.ref, [447400100001]);
        throw new Error("stopped halfway");
      });
      await expect(failure).rejects.toThrow("stopped halfway");
      expect(await store.runs.list({})).toEqual([]);
      expect(await store.tasks.withKey(SCOPE, "k1")).toBeUndefined();
      expect(await store.tasks.after(0, 10)).toEqual([]);
      // The store goes on as before.
      expect(await store.runs.create(newRun(), LEASE)).not.toBe("exists");
    });

    it("keeps two units of work begun at once apart: the one that throws undoes only its own writes", async () => {
      const store = await openStore();
      const undone = store.transaction(async ({ runs, tasks }) => {
        await runs.create(newRun({ id: "a", identity: "a" }), LEASE);
        await new Promise((resolve) => setTimeout(resolve, 20));
        await tasks.add({ scope: SCOPE, runId: "a", product: "carrier_batch", idempotencyKey: "ka" });
        throw new Error("undone");
      });
      const kept = store.transaction(({ runs }) => runs.create(newRun({ id: "b", identity: "b" }), LEASE));
      await expect(undone).rejects.toThrow("undone");
      await kept;
      expect((await store.runs.list({})).map((run) => run.id)).toEqual(["b"]);
      expect(await store.tasks.withKey(SCOPE, "ka")).toBeUndefined();
    });

    it("holds only its own writes: what the process writes outside it meanwhile stays when it throws, and is written whole", async () => {
      const store = await openStore();
      let inside!: () => void;
      const begun = new Promise<void>((resolve) => (inside = resolve));
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const undone = store.transaction(async ({ runs }) => {
        await runs.create(newRun({ id: "inside", identity: "inside" }), LEASE);
        inside();
        await finished;
        throw new Error("undone");
      });
      await begun;
      // A heartbeat, a task's status: written by the same process while the unit is under way.
      const outside = store.runs.create(newRun({ id: "outside", identity: "outside" }), LEASE);
      const task = store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "k-outside" });
      finish();
      await expect(undone).rejects.toThrow("undone");
      await outside;
      await task;
      expect((await store.runs.list({})).map((run) => run.id)).toEqual(["outside"]);
      expect(await store.tasks.withKey(SCOPE, "k-outside")).toBeDefined();
    });

    it("goes on after a run refused inside it (another open run of the command), as adopting does", async () => {
      const store = await openStore();
      await store.runs.create(newRun(), LEASE);
      const added = await store.transaction(async ({ runs, tasks }) => {
        expect(await runs.create(newRun({ id: "r2" }), LEASE)).toBe("exists");
        await runs.create(newRun({ id: "r2", identity: "history", state: "finished" }), LEASE);
        expect(
          await runs.claim("r2", { ...LEASE, nonce: "b" }, "2026-11-27T10:01:00.000Z", "2026-11-27T10:00:30.000Z", () => true),
        ).toBeUndefined();
        return tasks.add({ scope: SCOPE, runId: "r2", product: "carrier_batch", idempotencyKey: "k2" });
      });
      expect((await store.runs.get("r2"))?.lease?.nonce).toBe("b");
      expect((await store.tasks.withKey(SCOPE, "k2"))?.ref).toBe(added.ref);
    });
  });
}

import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Lease, NewRun, ResultRow, Scope } from "../../src/store/store.js";
import { tempDir } from "../helpers/cli.js";

const SCOPE: Scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };
const OTHER_SCOPE: Scope = { baseUrl: "https://api.example.com", profile: "default" };
const LEASE: Lease = { host: "here", pid: 1, nonce: "a" };

const opened: SqliteStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

function openStore(dir = tempDir()): SqliteStore {
  const store = SqliteStore.open(join(dir, "state", "bulkcheck.db"));
  opened.push(store);
  return store;
}

function newRun(overrides: Partial<NewRun> = {}): NewRun {
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
async function recordedTask(store: SqliteStore, checkedAt: string, rows: ResultRow[], columns = ["activated"], scope = SCOPE) {
  const task = await store.addTask({ scope, product: "number_activity_batch", taskId: `t-${checkedAt}`, submittedAt: checkedAt });
  await store.updateTask(task.ref, { status: "success", checkedAt });
  await store.addResults(task.ref, columns, rows);
  await store.markRecorded(task.ref, columns, checkedAt);
  return task;
}

async function collect<T>(iterable: AsyncIterable<readonly T[]>): Promise<T[]> {
  const all: T[] = [];
  for await (const batch of iterable) all.push(...batch);
  return all;
}

describe("the embedded store", () => {
  it("creates its file 0600 in a 0700 directory, with its write-ahead files as private", async () => {
    const dir = tempDir();
    const store = openStore(dir);
    await recordedTask(store, "2026-11-27T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
    expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700);
    for (const suffix of ["", "-wal", "-shm"]) expect(statSync(join(dir, "state", `bulkcheck.db${suffix}`)).mode & 0o777).toBe(0o600);
  });

  it("runs its migrations once: a second open finds the schema at its version", async () => {
    const dir = tempDir();
    const first = openStore(dir);
    expect(first.schemaVersion).toBe(1);
    await first.createRun(newRun(), LEASE);
    const second = openStore(dir);
    expect(second.schemaVersion).toBe(1);
    expect((await second.run("r1"))?.identity).toBe("same-command");
  });

  it("keeps one open run per command and scope: a second run of the same command is refused while the first is open", async () => {
    const store = openStore();
    expect(await store.createRun(newRun(), LEASE)).not.toBe("exists");
    expect(await store.createRun(newRun({ id: "r2" }), LEASE)).toBe("exists");
    expect(await store.createRun(newRun({ id: "r3", scope: OTHER_SCOPE }), LEASE)).not.toBe("exists");
    await store.updateRun("r1", { state: "finished", finishedAt: "2026-11-27T11:00:00.000Z" });
    expect(await store.openRun(SCOPE, "same-command")).toBeUndefined();
    expect(await store.createRun(newRun({ id: "r4" }), LEASE)).not.toBe("exists");
    expect((await store.openRun(SCOPE, "same-command"))?.id).toBe("r4");
  });

  it("gives a run's lease to one live process at a time, and takes it from a stale or dead holder", async () => {
    const store = openStore();
    await store.createRun(newRun(), LEASE);
    const other: Lease = { host: "here", pid: 2, nonce: "b" };
    const now = "2026-11-27T10:00:30.000Z";
    expect(await store.claimRun("r1", other, now, "2026-11-27T09:59:00.000Z", () => true)).toEqual(LEASE);
    expect(await store.claimRun("r1", other, now, "2026-11-27T09:59:00.000Z", () => false)).toBeUndefined();
    expect((await store.run("r1"))?.lease).toEqual({ ...other, heartbeatAt: now });
    expect(await store.claimRun("r1", LEASE, now, "2026-11-27T10:01:00.000Z", () => true)).toBeUndefined();
    await store.releaseRun("r1", LEASE);
    expect((await store.run("r1"))?.lease).toBeUndefined();
  });

  it("finds a run by a prefix of its id only when the prefix names one run", async () => {
    const store = openStore();
    await store.createRun(newRun({ id: "abc1" }), LEASE);
    await store.createRun(newRun({ id: "abc2", identity: "other" }), LEASE);
    expect(await store.run("abc")).toBeUndefined();
    expect((await store.run("abc2"))?.id).toBe("abc2");
    expect((await store.runs({ scope: SCOPE })).map((run) => run.id)).toEqual(["abc2", "abc1"]);
  });

  it("dates a task's results by the first check that saw it succeed", async () => {
    const store = openStore();
    const task = await store.addTask({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "k1", count: 500, sha256: "ff" });
    await store.updateTask(task.ref, { taskId: "t1", status: "success", checkedAt: "2026-11-27T10:00:00.000Z" });
    await store.updateTask(task.ref, { status: "success", checkedAt: "2026-11-28T10:00:00.000Z" });
    expect(await store.taskWithKey(SCOPE, "k1")).toMatchObject({ taskId: "t1", checkedAt: "2026-11-27T10:00:00.000Z", count: 500 });
    expect(await store.taskWithKey(OTHER_SCOPE, "k1")).toBeUndefined();
    expect((await store.taskById(SCOPE, "t1"))?.ref).toBe(task.ref);
  });

  it("counts the uploads under way (since a moment) and the tasks not yet seen finished", async () => {
    const store = openStore();
    const a = await store.addTask({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "a" });
    const b = await store.addTask({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "b" });
    const c = await store.addTask({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "c" });
    await store.markUploading(a.ref, "2026-11-27T10:00:00.000Z");
    await store.markUploading(b.ref, "2026-11-27T09:00:00.000Z");
    await store.markUploading(c.ref, "2026-11-27T10:00:00.000Z");
    await store.updateTask(c.ref, { taskId: "tc", status: "processing" });
    expect(await store.activity(SCOPE, "2026-11-27T09:30:00.000Z")).toEqual({ uploading: 1, unfinished: 1 });
    await store.updateTask(c.ref, { status: "success", checkedAt: "2026-11-27T10:05:00.000Z" });
    await store.markUploading(a.ref, undefined);
    expect(await store.activity(SCOPE, "2026-11-27T09:30:00.000Z")).toEqual({ uploading: 0, unfinished: 0 });
    expect(await store.activity(OTHER_SCOPE, "2026-11-27T09:30:00.000Z")).toEqual({ uploading: 0, unfinished: 0 });
  });

  it("records a task's rows once, with the columns the service added, and reads them back", async () => {
    const store = openStore();
    const columns = ["carrier", "underlying_carrier", "number_type", "country_code", "region", "city", "ported"];
    const rows = [
      { identifier: "447400100001", values: ["EE", "EE", "mobile", "GB", "", "", "no"] },
      { identifier: "447400100002", values: ["Three", "Three", "mobile", "GB", "England", "London", "yes"] },
      { identifier: "not-a-number", values: ["x", "", "", "", "", "", ""] },
    ];
    const task = await recordedTask(store, "2026-11-27T10:00:00.000Z", rows, columns);
    await store.addResults(task.ref, columns, rows);
    await store.markRecorded(task.ref, columns, "2026-11-27T10:01:00.000Z");
    const back = await collect(store.taskResults(task.ref));
    expect(back).toHaveLength(2);
    expect(back[1]).toMatchObject({
      identifier: "447400100002",
      checkedAt: "2026-11-27T10:00:00.000Z",
      values: { carrier: "Three", region: "England", city: "London", ported: "yes" },
    });
  });

  it("counts a task's rows for nothing until its whole result is marked recorded", async () => {
    const store = openStore();
    const task = await store.addTask({ scope: SCOPE, product: "number_activity_batch", taskId: "t-half" });
    await store.updateTask(task.ref, { status: "success", checkedAt: "2026-11-27T10:00:00.000Z" });
    await store.addResults(task.ref, ["activated"], [{ identifier: "447400100001", values: ["true"] }]);
    expect(await store.lookup(["447400100001"])).toEqual([]);
    expect(await collect(store.freshResults(SCOPE, "number_activity_batch", ""))).toEqual([]);
    expect(await store.stats()).toMatchObject({ results: 0, tasks: 0 });
    await store.markRecorded(task.ref, ["activated"], "2026-11-27T10:01:00.000Z");
    expect(await store.lookup(["447400100001"])).toHaveLength(1);
    expect(await store.stats()).toMatchObject({ results: 1, tasks: 1 });
  });

  it("lists fresh results newest first, within a product and scope, as of a task reference", async () => {
    const store = openStore();
    const old = await recordedTask(store, "2026-11-20T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
    const recent = await recordedTask(store, "2026-11-26T10:00:00.000Z", [
      { identifier: "447400100001", values: ["false"] },
      { identifier: "447400100002", values: ["true"] },
    ]);
    await recordedTask(store, "2026-11-26T11:00:00.000Z", [{ identifier: "447400100003", values: ["true"] }], ["activated"], OTHER_SCOPE);
    const fresh = await collect(store.freshResults(SCOPE, "number_activity_batch", "2026-11-19T00:00:00.000Z"));
    expect(fresh).toEqual([
      { identifier: 447400100001, taskRef: recent.ref },
      { identifier: 447400100002, taskRef: recent.ref },
      { identifier: 447400100001, taskRef: old.ref },
    ]);
    expect(await collect(store.freshResults(SCOPE, "number_activity_batch", "2026-11-25T00:00:00.000Z", old.ref))).toEqual([]);
    expect(await collect(store.freshResults(SCOPE, "carrier_batch", "2026-11-19T00:00:00.000Z"))).toEqual([]);
  });

  it("pairs each result with the same number's latest earlier result", async () => {
    const store = openStore();
    await recordedTask(store, "2026-11-20T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
    await recordedTask(store, "2026-11-21T10:00:00.000Z", [{ identifier: "447400100001", values: ["false"] }]);
    const latest = await recordedTask(store, "2026-11-22T10:00:00.000Z", [
      { identifier: "447400100001", values: ["true"] },
      { identifier: "447400100009", values: ["true"] },
    ]);
    const pairs = await collect(store.previousResults(latest.ref));
    expect(pairs).toHaveLength(1);
    expect(pairs[0]!.current.values).toEqual({ activated: "true" });
    expect(pairs[0]!.previous).toMatchObject({ checkedAt: "2026-11-21T10:00:00.000Z", values: { activated: "false" } });
  });

  it("forgets a number: no byte of it is left in the database or its write-ahead log", async () => {
    const dir = tempDir();
    const store = openStore(dir);
    const rows = Array.from({ length: 3000 }, (_, i) => ({ identifier: String(447400100000 + i), values: ["true"] }));
    await recordedTask(store, "2026-11-20T10:00:00.000Z", rows);
    await recordedTask(store, "2026-11-21T10:00:00.000Z", rows.slice(1000, 1100));
    const gone = "447400101042";
    expect(await store.forget([gone])).toBe(2);
    expect(await store.lookup([gone])).toEqual([]);
    expect(await store.lookup(["447400101043"])).toHaveLength(2);
    const files = ["", "-wal"].map((suffix) => readFileSync(join(dir, "state", `bulkcheck.db${suffix}`)));
    const asInteger = Buffer.alloc(6);
    asInteger.writeUIntBE(Number(gone), 0, 6);
    for (const bytes of files) {
      expect(bytes.includes(gone)).toBe(false);
      expect(bytes.includes(asInteger)).toBe(false);
    }
    // The check itself finds a number that is still there.
    asInteger.writeUIntBE(447400101043, 0, 6);
    expect(files[0]!.includes(asInteger)).toBe(true);
  });

  it("prunes results checked before a date and counts what is left", async () => {
    const store = openStore();
    await recordedTask(store, "2026-05-01T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
    await recordedTask(store, "2026-11-21T10:00:00.000Z", [
      { identifier: "447400100001", values: ["false"] },
      { identifier: "447400100002", values: ["true"] },
    ]);
    expect(await store.prune("2026-06-01T00:00:00.000Z")).toBe(1);
    const stats = await store.stats();
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

  it("lets two processes race to open the same command's run: exactly one of them creates it", async () => {
    const dir = tempDir();
    const path = join(dir, "state", "bulkcheck.db");
    openStore(dir);
    const storeModule = new URL("../../dist/store/sqlite-store.js", import.meta.url).href;
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(storeModule)});
      const store = SqliteStore.open(${JSON.stringify(path)});
      const answer = await store.createRun({ ...${JSON.stringify(newRun())}, id: "r" + process.pid }, { host: "h", pid: process.pid, nonce: "n" });
      process.stdout.write(answer === "exists" ? "exists" : "created");
      await store.close();`;
    const race = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ["--input-type=module", "-e", script]);
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        child.on("error", reject);
        child.on("close", () => resolve(out));
      });
    const answers = await Promise.all([race(), race(), race(), race()]);
    expect(answers.sort()).toEqual(["created", "exists", "exists", "exists"]);
  });
});

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { forgetNumbers, pruneResults } from "../../src/run/erase.js";
import { ResultRecording } from "../../src/ledger/recording.js";
import { collectAbandonedRuns } from "../../src/run/abandoned.js";
import { Staging, stagingRoot } from "../../src/run/staging.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Scope } from "../../src/store/store.js";
import { fileSha256 } from "../../src/tasks/file-sha256.js";
import { tempDir } from "../helpers/cli.js";

const SCOPE: Scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };
const RESULT = "identifier,activated\n447400100001,true\n447400100002,false\n447400100003,true\n";
const CHECKED_AT = "2026-11-20T10:00:00.000Z";

const stores: SqliteStore[] = [];

/** Recording into `store` (in this thread: tests run from sources). */
function recording(store: SqliteStore): ResultRecording {
  return new ResultRecording({
    location: store.location,
    env: {},
    now: () => Date.parse(CHECKED_AT),
    signal: new AbortController().signal,
  });
}
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const never = (): Promise<Readable> => Promise.reject(new Error("downloaded again"));

/**
 * A state directory whose run `r1` (of `product`) was killed with its first part's result
 * staged, checked at CHECKED_AT and not yet recorded in the ledger.
 */
async function killedRun(product = "number_activity_batch") {
  const stateDir = tempDir();
  const store = SqliteStore.open(join(stateDir, "bulkcheck.db"));
  stores.push(store);
  const runId = "r1";
  await store.runs.create(
    { id: runId, scope: SCOPE, identity: runId, kind: "submit", state: "open", startedAt: CHECKED_AT, product, source: {}, settings: {} },
    { host: "here", pid: process.pid, nonce: "n" },
  );
  const task = await store.tasks.add({ scope: SCOPE, runId, part: 0, parts: 1, idempotencyKey: "k0", product });
  await store.tasks.update(task.ref, { taskId: "t0", status: "success", total: 3, successCnt: 3, checkedAt: CHECKED_AT });
  const finished = {
    upload: { index: 0, of: 1, idempotencyKey: "k0", ref: task.ref, path: "", count: 3, bytes: 1, sha256: "" },
    task: { id: "t0", product, status: "success", country: "GB", total: 3, created_at: "" },
    replayed: false,
  } as const;
  const open = () => Staging.open(stagingRoot(stateDir, true), runId, store);
  await (await open()).stage(finished, () => Promise.resolve(Readable.from([Buffer.from(RESULT)])));
  const staged = async () => (await store.tasks.ofRun(runId))[0]!.staged!;
  return { stateDir, store, task, finished, open, staged };
}

describe("forgetting numbers a killed run staged", () => {
  it("rewrites the staged result without their rows and records its new size and hash: carried on, the run takes it and never records them", async () => {
    const { stateDir, store, task, finished, open, staged } = await killedRun();
    const { file } = await staged();
    // A download a killed process left unfinished, beside its staged results: no run ever reads it.
    const deadOwner = join(stateDir, "staging", "r1", "999999999-abcd");
    mkdirSync(deadOwner, { recursive: true });
    writeFileSync(join(deadOwner, ".part-1.result.tmp"), "identifier,activated\n447400100002,fa");

    const scope = { stores: [store], stateDir };
    expect(await forgetNumbers(scope, ["447400100002"], { dryRun: true })).toEqual({
      stores: [{ location: store.location, results: 0 }],
      staged: { files: 1, rows: 1 },
    });
    expect(readFileSync(file, "utf8")).toBe(RESULT);
    expect((await forgetNumbers(scope, ["447400100002"], {})).staged).toEqual({ files: 1, rows: 1 });
    expect(readFileSync(file, "utf8")).toBe("identifier,activated\n447400100001,true\n447400100003,true\n");
    expect(await staged()).toEqual({ file, bytes: readFileSync(file).length, sha256: await fileSha256(file) });
    expect(existsSync(join(deadOwner, ".part-1.result.tmp"))).toBe(false);

    const carriedOn = await open();
    expect(await carriedOn.stage(finished, never)).toBe("reused");
    const result = { taskRef: task.ref, product: "number_activity_batch" as const, task: finished.task, label: "task t0" };
    expect(await recording(store).recordFile(result, await carriedOn.path(finished.task))).toBe(2);
    expect(await store.ledger.lookup(["447400100002"])).toEqual([]);
    expect(await store.ledger.lookup(["447400100001", "447400100003"])).toHaveLength(2);
  });

  it("keeps them out when the killed run is abandoned instead: its results are collected from the rewritten staged copy", async () => {
    const { stateDir, store, finished } = await killedRun();
    await forgetNumbers({ stores: [store], stateDir }, ["447400100002"], {});
    await store.runs.update("r1", { state: "abandoned" });
    const client = {
      checkTask: () => Promise.resolve({ ...finished.task, success_cnt: 3, failure_cnt: 0 }),
      openResult: () => Promise.reject(new Error("downloaded again")),
    };
    const collected = await collectAbandonedRuns({
      store,
      stateDir,
      scope: SCOPE,
      client,
      sleep: () => Promise.resolve(),
      signal: new AbortController().signal,
      now: () => Date.parse(CHECKED_AT),
      recording: recording(store),
    });
    expect(collected).toBe(1);
    expect(await store.ledger.lookup(["447400100002"])).toEqual([]);
    expect(await store.ledger.lookup(["447400100001", "447400100003"])).toHaveLength(2);
  });

  it("leaves another product's staged result as it is under --product", async () => {
    const { stateDir, store, staged } = await killedRun("number_validation_batch");
    const report = await forgetNumbers({ stores: [store], stateDir }, ["447400100002"], { product: "number_activity_batch" });
    expect(report.staged).toEqual({ files: 0, rows: 0 });
    expect(readFileSync((await staged()).file, "utf8")).toBe(RESULT);
  });
});

describe("forgetting numbers a killed run had not staged yet", () => {
  it("remembers them while the run is open: its result, fetched afterwards, is recorded without them, and the memory goes with the run", async () => {
    const { stateDir, store, task, finished } = await killedRun();
    // Killed before its result was staged: nothing of it on disk or in the store for forget to rewrite.
    await store.tasks.update(task.ref, { staged: undefined });
    const report = await forgetNumbers({ stores: [store], stateDir }, ["447400100002"], {});
    expect(report.stores).toEqual([{ location: store.location, results: 0, remembered: 1 }]);
    // Carried on, the run fetches the result again and records it (all 3 rows read, 2 kept).
    const fetched = join(tempDir(), "part-1.result");
    writeFileSync(fetched, RESULT);
    const result = { taskRef: task.ref, product: "number_activity_batch" as const, task: finished.task, label: "task t0" };
    expect(await recording(store).recordFile(result, fetched)).toBe(3);
    expect(await store.ledger.lookup(["447400100002"])).toEqual([]);
    expect(await store.ledger.lookup(["447400100001", "447400100003"])).toHaveLength(2);

    await store.runs.update("r1", { state: "finished" });
    expect(await store.ledger.dropSpentErasures()).toBe(1);
    expect(await store.ledger.erasedSince(task.ref)).toBeUndefined();
  });
});

describe("pruning results a killed run staged", () => {
  it("removes a staged result whose task was checked before the cut, and none with --dry-run or a cut before its check", async () => {
    const { stateDir, store, staged } = await killedRun();
    const { file } = await staged();
    const scope = { stores: [store], stateDir };
    expect((await pruneResults(scope, "2026-11-20T09:00:00.000Z")).staged).toEqual({ files: 0 });
    expect((await pruneResults(scope, "2026-11-21T00:00:00.000Z", { dryRun: true })).staged).toEqual({ files: 1 });
    expect(existsSync(file)).toBe(true);
    expect((await pruneResults(scope, "2026-11-21T00:00:00.000Z")).staged).toEqual({ files: 1 });
    expect(existsSync(file)).toBe(false);
  });
});

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { afterEach, describe, expect, it } from "vitest";
import { Staging } from "../../src/run/staging.js";
import type { Task } from "../../src/spec/task.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Scope, TaskRecord } from "../../src/store/store.js";
import type { UploadResult } from "../../src/tasks/submit.js";
import { tempDir } from "../helpers/cli.js";

const RESULT = "identifier,activated\n447400100000,true\n";
const SCOPE: Scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const body = (content: string) => async () => Readable.from([Buffer.from(content)]);
const never = async (): Promise<Readable> => {
  throw new Error("downloaded again");
};

/** A store holding runs of two parts each (their task rows written, as before any upload), and their staging under one root. */
async function setup() {
  const state = tempDir();
  const store = SqliteStore.open(join(state, "bulkcheck.db"));
  stores.push(store);
  const root = join(state, "staging");
  const parts = new Map<string, TaskRecord[]>();
  /** A run's staging (the run and its parts are recorded on first use). */
  const open = async (runId = "r1") => {
    if (!parts.has(runId)) {
      await store.runs.create(
        {
          id: runId,
          scope: SCOPE,
          identity: runId,
          kind: "submit",
          state: "open",
          startedAt: "2025-01-15T00:00:00.000Z",
          product: "carrier_batch",
          source: {},
          settings: {},
        },
        { host: "here", pid: process.pid, nonce: "n" },
      );
      const rows = [];
      for (const part of [0, 1]) {
        rows.push(
          await store.tasks.add({ scope: SCOPE, runId, part, parts: 2, idempotencyKey: `${runId}-key-${part}`, product: "carrier_batch" }),
        );
      }
      parts.set(runId, rows);
    }
    return Staging.open(root, runId, store);
  };
  /** Part `index` of run `runId` has task `id`, finished. */
  const finished = (index: number, id: string, runId = "r1"): UploadResult => {
    const row = parts.get(runId)![index]!;
    const task: Task = { id, product: "carrier_batch", status: "success", country: "GB", total: 1, created_at: "" };
    return {
      upload: { index, of: 2, idempotencyKey: row.idempotencyKey!, ref: row.ref, path: "", count: 1, bytes: 1, sha256: "" },
      task,
      replayed: false,
    };
  };
  /** What the store records as staged for a part of run r1. */
  const staged = async (index: number) => (await store.tasks.ofRun("r1")).find((task) => task.part === index)?.staged;
  return { store, root, open, finished, staged };
}

describe("Staging", () => {
  it("keeps a result whole in a private directory, records its size and hash, and reads it back", async () => {
    const { root, open, finished, staged } = await setup();
    const staging = await open();
    expect(await staging.stage(finished(0, "t0"), body(RESULT))).toBe("fetched");
    const entry = await staged(0);
    expect(entry).toEqual({
      file: expect.any(String) as unknown,
      bytes: RESULT.length,
      sha256: createHash("sha256").update(RESULT).digest("hex"),
    });
    expect(relative(staging.dir, entry!.file)).toMatch(/^\d+-[0-9a-f]+\/part-1\.result$/);
    expect(await staged(1)).toBeUndefined();
    const file = entry!.file;
    for (const dir of [root, staging.dir, dirname(file)]) expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dirname(file))).toEqual(["part-1.result"]);
    expect(await text(await staging.read(finished(0, "t0").task))).toBe(RESULT);
  });

  it("gives a continued run the same directory, and reuses a staged result that still checks out", async () => {
    const { open, finished } = await setup();
    const first = await open();
    await first.stage(finished(0, "t0"), body(RESULT));
    const rerun = await open();
    expect(rerun.dir).toBe(first.dir);
    expect(await rerun.stage(finished(0, "t0"), never)).toBe("reused");
    expect(await text(await rerun.read(finished(0, "t0").task))).toBe(RESULT);
    expect((await open("r2")).dir).not.toBe(first.dir);
  });

  it("fetches again a staged result whose bytes changed", async () => {
    const { open, finished, staged } = await setup();
    const first = await open();
    await first.stage(finished(0, "t0"), body(RESULT));
    writeFileSync((await staged(0))!.file, RESULT.replace("true", "fals"));
    const rerun = await open();
    expect(await rerun.stage(finished(0, "t0"), body(RESULT))).toBe("fetched");
    expect(await text(await rerun.read(finished(0, "t0").task))).toBe(RESULT);
  });

  it("fetches again a staged result that belongs to another task than the part's", async () => {
    const { store, open, finished } = await setup();
    await (await open()).stage(finished(0, "t0"), body(RESULT));
    // The service no longer knew t0 (a restarted sandbox): the part was uploaded again, under its key, as t9.
    await store.tasks.update(finished(0, "t9").upload.ref, { taskId: "t9", status: "processing" });
    const other = RESULT.replace("true", "false");
    const rerun = await open();
    expect(await rerun.stage(finished(0, "t9"), body(other))).toBe("fetched");
    expect(await text(await rerun.read(finished(0, "t9").task))).toBe(other);
  });

  it("leaves nothing staged or recorded when the transfer breaks", async () => {
    const { open, finished, staged } = await setup();
    const staging = await open();
    const broken = async () =>
      Readable.from(
        (async function* () {
          yield Buffer.from("identifier,activated\n");
          throw new Error("connection reset");
        })(),
      );
    await expect(staging.stage(finished(1, "t1"), broken)).rejects.toThrow("connection reset");
    const [own] = readdirSync(staging.dir);
    expect(readdirSync(join(staging.dir, own!))).toEqual([]);
    expect(await staged(1)).toBeUndefined();
  });

  it("lets two processes on the same run at once each keep what it reads, and removes the directory when the last is done", async () => {
    const { open, finished } = await setup();
    const first = await open();
    const second = await open();
    await first.stage(finished(0, "t0"), body(RESULT));
    expect(await second.stage(finished(0, "t0"), never)).toBe("reused");
    await first.remove();
    expect(await text(await second.read(finished(0, "t0").task))).toBe(RESULT);
    // What a process that is no longer running left goes too; a running one's stays until it is done.
    mkdirSync(join(second.dir, "999999999-dead"));
    await second.remove();
    expect(existsSync(second.dir)).toBe(false);
  });

  it("keeps the directory of another process still going", async () => {
    const { open } = await setup();
    const staging = await open();
    const running = join(staging.dir, `${process.pid}-beef`);
    mkdirSync(running);
    await staging.remove();
    expect(readdirSync(staging.dir)).toEqual([`${process.pid}-beef`]);
  });
});

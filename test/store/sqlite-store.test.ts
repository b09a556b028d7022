import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileSystemError } from "../../src/file-system-errors.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { tempDir } from "../helpers/cli.js";
import { newRun, recordedTask, storeContract } from "./store-contract.js";
import { recordRows } from "../helpers/ledger-rows.js";

const opened: SqliteStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

function openStore(dir = tempDir()): SqliteStore {
  const store = SqliteStore.open(join(dir, "state", "bulkcheck.db"));
  opened.push(store);
  return store;
}

describe("the embedded store", () => {
  storeContract({
    emptyLocation: () => Promise.resolve(join(tempDir(), "state", "bulkcheck.db")),
    open: (path) => Promise.resolve(SqliteStore.open(path)),
  });

  it("reads a task's numbers, its results' identifiers and its results past one page whole", async () => {
    const store = openStore();
    const scope = { baseUrl: "http://127.0.0.1:1", profile: "default" };
    const task = await store.tasks.add({ scope, product: "number_activity_batch", taskId: "b".repeat(32) });
    const numbers = Array.from({ length: 120_001 }, (_, i) => 447_400_000_000 + ((i * 7919) % 120_001));
    await store.tasks.addNumbers(task.ref, numbers);
    const rows = numbers.slice(0, 60_001).map((n) => ({ identifier: String(n), values: ["true"] }));
    await store.tasks.update(task.ref, { status: "success", checkedAt: "2026-11-26T00:00:00.000Z" });
    await recordRows(store.ledger, task.ref, ["activated"], rows, "2026-11-26T00:00:00.000Z");
    const read: number[] = [];
    for await (const batch of store.tasks.numbers(task.ref)) read.push(...batch);
    expect(read.sort((a, b) => a - b)).toEqual([...numbers].sort((a, b) => a - b));
    const results: number[] = [];
    for await (const batch of store.ledger.latest(scope, "number_activity_batch")) results.push(...batch.map((row) => row.identifier));
    expect(results.sort((a, b) => a - b)).toEqual(numbers.slice(0, 60_001).sort((a, b) => a - b));
    const stored: Array<[string, string | undefined]> = [];
    for await (const batch of store.ledger.ofTask(task.ref))
      stored.push(...batch.map((row): [string, string | undefined] => [row.identifier, row.values.activated]));
    expect(stored).toEqual(rows.map((row): [string, string] => [row.identifier, "true"]).sort((a, b) => Number(a[0]) - Number(b[0])));
  });

  it("says a full disk is one, naming the store (exit 3), and keeps what was committed before", () => {
    const path = join(tempDir(), "state", "bulkcheck.db");
    const db = SqliteDb.open(path);
    try {
      db.exec("CREATE TABLE kept (x); INSERT INTO kept VALUES ('before')");
      // A database may not grow past max_page_count: SQLite then answers as it does on a full disk.
      db.exec(`PRAGMA max_page_count = ${Number(db.row("PRAGMA page_count")![0]) + 2}`);
      const full = (() => {
        try {
          db.transaction(() => db.run("INSERT INTO kept VALUES (randomblob(100000))"));
        } catch (error) {
          return error;
        }
      })();
      expect(full).toBeInstanceOf(FileSystemError);
      expect(full).toMatchObject({ kind: "input", message: `Cannot use ${path}: no space left on the device (ENOSPC).` });
      expect((full as FileSystemError).hint).toMatch(/temporary directory/);
      expect(db.rows("SELECT x FROM kept")).toEqual([["before"]]);
    } finally {
      db.close();
    }
  });

  it("creates its file 0600 in a 0700 directory, with its write-ahead files as private", async () => {
    const dir = tempDir();
    const store = openStore(dir);
    await recordedTask(store, "2026-11-27T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
    expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700);
    for (const suffix of ["", "-wal", "-shm"]) expect(statSync(join(dir, "state", `bulkcheck.db${suffix}`)).mode & 0o777).toBe(0o600);
  });
  it("forgets a number: no byte of it is left in the database or its write-ahead log", async () => {
    const dir = tempDir();
    const store = openStore(dir);
    const rows = Array.from({ length: 3000 }, (_, i) => ({ identifier: String(447400100000 + i), values: ["true"] }));
    await recordedTask(store, "2026-11-20T10:00:00.000Z", rows);
    await recordedTask(store, "2026-11-21T10:00:00.000Z", rows.slice(1000, 1100));
    const gone = "447400101042";
    expect(await store.ledger.forget([gone])).toEqual({ results: 2 });
    expect(await store.ledger.lookup([gone])).toEqual([]);
    expect(await store.ledger.lookup(["447400101043"])).toHaveLength(2);
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

  it("lets two processes race to open the same command's run: exactly one of them creates it", async () => {
    const dir = tempDir();
    const path = join(dir, "state", "bulkcheck.db");
    openStore(dir);
    const storeModule = new URL("../../dist/store/sqlite-store.js", import.meta.url).href;
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(storeModule)});
      const store = SqliteStore.open(${JSON.stringify(path)});
      const answer = await store.runs.create({ ...${JSON.stringify(newRun())}, id: "r" + process.pid }, { host: "h", pid: process.pid, nonce: "n" });
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

  it("keeps a connection's lock when the same process opens the store again, so another process closing it leaves the write-ahead log alone", async () => {
    const dir = tempDir();
    const path = join(dir, "state", "bulkcheck.db");
    const first = openStore(dir);
    await recordedTask(first, "2026-11-27T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
    openStore(dir);
    // The last connection to close removes the write-ahead log; while `first` is open, this one is not the last.
    const storeModule = new URL("../../dist/store/sqlite-store.js", import.meta.url).href;
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(storeModule)});
      await SqliteStore.open(${JSON.stringify(path)}).close();`;
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`the other process ended ${code}`))));
    });
    expect(existsSync(`${path}-wal`)).toBe(true);
    await recordedTask(first, "2026-11-27T11:00:00.000Z", [{ identifier: "447400100002", values: ["false"] }]);
    expect(await first.ledger.lookup(["447400100001", "447400100002"])).toHaveLength(2);
  });
});

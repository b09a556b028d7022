import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type OpenedStore } from "../../src/store/open.js";
import { runCli, tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { collect } from "./store-contract.js";

/**
 * Stores written by the release before the store's parts and migration lists (commit
 * 47aa12e, through its own code: see test/fixtures/store-0.2/README.md): an SQLite file, and
 * a PostgreSQL schema as SQL that replays it. Opened by this bulkcheck, every run, key, number
 * and result reads back as that release read it.
 */
const FIXTURES = new URL("../fixtures/store-0.2/", import.meta.url);
const EXPECTED = JSON.parse(readFileSync(new URL("expected.json", FIXTURES), "utf8")) as {
  runs: Array<{ id: string; state: string }>;
  tasks: Array<{ ref: number; idempotencyKey?: string; scope: { baseUrl: string; profile: string } }>;
  numbers: Record<string, number[]>;
  results: Record<string, unknown[]>;
};

const opened: OpenedStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** A copy of the release's SQLite store in a state directory of its own; that directory. */
function sqliteFixture(): string {
  const dir = tempDir();
  copyFileSync(new URL("bulkcheck.db", FIXTURES), join(dir, "bulkcheck.db"));
  return dir;
}

/** A new database holding the release's PostgreSQL schema and rows; its URL. */
async function postgresFixture(): Promise<string> {
  const url = await createTestDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(readFileSync(new URL("postgres.sql", FIXTURES), "utf8"));
  } finally {
    await client.end();
  }
  return url;
}

const fixtures = [
  ["an SQLite file", () => Promise.resolve({ location: join(sqliteFixture(), "bulkcheck.db") })],
  ["a PostgreSQL schema", async () => ({ location: await postgresFixture() })],
] as const;

describe.each(fixtures)("a store of the release before, %s,", (_, fixture) => {
  it("opens at its version and reads every run, task with its key, number and result as that release did", async () => {
    const { location } = await fixture();
    const store = await openStore(location, {});
    opened.push(store);
    expect(store.schemaVersion).toBe(4);
    const tasks = await store.tasks.after(0, 1000);
    const reading = {
      runs: await store.runs.list({}),
      tasks,
      numbers: Object.fromEntries(
        await Promise.all(tasks.map(async (task) => [task.ref, (await collect(store.tasks.numbers(task.ref))).sort()])),
      ),
      results: Object.fromEntries(await Promise.all(tasks.map(async (task) => [task.ref, await collect(store.ledger.ofTask(task.ref))]))),
    };
    expect(JSON.parse(JSON.stringify(reading))).toEqual({
      ...EXPECTED,
      numbers: Object.fromEntries(Object.entries(EXPECTED.numbers).map(([ref, numbers]) => [ref, [...numbers].sort()])),
    });
    for (const task of EXPECTED.tasks.filter((task) => task.idempotencyKey !== undefined)) {
      expect((await store.tasks.withKey(task.scope, task.idempotencyKey!))?.ref).toBe(task.ref);
    }
    // The open run is this release's to continue: found by its command, its lease taken from the old holder.
    const open = await store.runs.open({ baseUrl: "http://127.0.0.1:1", profile: "default" }, "identity-open");
    expect(open?.id).toBe("run-open");
    const lease = { host: "new-host", pid: 1, nonce: "n1" };
    expect(await store.runs.claim("run-open", lease, "2026-11-28T10:00:00.000Z", "2026-11-28T09:59:00.000Z", () => true)).toBeUndefined();
    // Fresh results reused as before, and the next task reference after the release's.
    expect(await collect(store.ledger.latest({ baseUrl: "http://127.0.0.1:1", profile: "default" }, "number_activity_batch"))).toHaveLength(
      8,
    );
    expect((await store.tasks.add({ scope: open!.scope, product: "carrier_batch" })).ref).toBe(
      Math.max(...tasks.map((task) => task.ref)) + 1,
    );
  });

  it("shows its runs, a run's tasks and a number's results through the CLI, and store check finds it sound", async () => {
    const { location } = await fixture();
    const env = location.startsWith("postgres")
      ? { BULKCHECK_CONFIG_DIR: tempDir(), BULKCHECK_STORE_URL: location }
      : { BULKCHECK_CONFIG_DIR: join(location, "..") };
    const runs = await runCli(["runs", "--all", "--json"], { env });
    expect(runs.code).toBe(0);
    expect(
      (JSON.parse(runs.stdout) as { runs: Array<{ id: string; state: string }> }).runs.map(({ id, state }) => ({ id, state })),
    ).toEqual(EXPECTED.runs.map(({ id, state }) => ({ id, state })));
    const shown = await runCli(["runs", "show", "run-open", "--json", "--base-url", "http://127.0.0.1:1"], { env });
    expect(shown.code).toBe(0);
    expect((JSON.parse(shown.stdout) as { tasks: unknown[] }).tasks).toEqual([
      { part: 1, task_id: "task-open-0", numbers: 3, status: "processing", recorded: false },
      { part: 2, numbers: 3, status: "not uploaded", recorded: false },
    ]);
    const lookup = await runCli(["ledger", "lookup", "+12025550123", "--json"], { env });
    expect(lookup.code).toBe(0);
    expect(JSON.parse(lookup.stdout)).toMatchObject({
      identifier: "12025550123",
      task_id: "task-downloaded",
      carrier: "Verizon",
      ported: "",
    });
    const check = await runCli(["store", "check", "--json"], { env });
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ schema_version: 4, ok: true, problems: [] });
  });
});

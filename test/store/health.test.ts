import { truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { exitCodeFor } from "../../src/cli/exit-codes.js";
import { schemaProblems, schemaShape, StoreDamagedError, StoreTooNewError } from "../../src/store/health.js";
import { checkStore, openStore, type OpenedStore } from "../../src/store/open.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { latestVersion } from "../../src/store/migrations/migration.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/migrations/postgres.js";
import { SQLITE_MIGRATIONS } from "../../src/store/migrations/sqlite.js";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { LEASE, newRun } from "./store-contract.js";

const opened: OpenedStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/**
 * A new SQLite store holding `rows` rows of bookkeeping, closed, with everything moved from
 * its write-ahead log into the file (so a truncation cuts into them); its path.
 */
async function sqliteStore(rows = 0): Promise<string> {
  const path = join(tempDir(), "bulkcheck.db");
  const store = SqliteStore.open(path);
  await store.transaction(async ({ runs }) => {
    for (let i = 0; i < rows; i++) await runs.create(newRun({ id: `run-${i}`, identity: `command-${i}`, note: "x".repeat(200) }), LEASE);
  });
  await store.close();
  sqlite(path, "SELECT 1");
  return path;
}

/** Runs `sql` on the SQLite file at `path` outside bulkcheck, as another program (or a newer bulkcheck) would, and checkpoints it into the file. */
function sqlite(path: string, sql: string): void {
  const db = new Database(path);
  db.exec(sql);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

async function pgQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe("a damaged SQLite store", () => {
  it.each([
    [
      "overwritten with a CSV file",
      (path: string) => writeFileSync(path, "phone,carrier\n+447400100001,Vodafone\n"),
      "file is not a database",
    ],
    ["truncated", (path: string) => truncateSync(path, 100_000), "database disk image is malformed"],
  ])("is refused when %s, exit 3 naming the file and what to do", async (_how, damage, problem) => {
    const path = await sqliteStore(2000);
    damage(path);
    // The first statement that reads a damaged page fails: opening, or reading the last row written.
    let error: unknown;
    try {
      const store = (await openStore(path, {})) as SqliteStore;
      opened.push(store);
      await store.runs.get("run-1999");
    } catch (refused) {
      error = refused;
    }
    expect(error).toBeInstanceOf(StoreDamagedError);
    expect(exitCodeFor((error as StoreDamagedError).kind)).toBe(3);
    expect((error as Error).message).toBe(`The store ${path} is damaged: ${problem}.`);
    expect((error as StoreDamagedError).hint).toContain("bulkcheck store check");
  });
});

describe("store check", () => {
  it("finds a sound SQLite store sound, then each kind of damage", async () => {
    const path = await sqliteStore(2000);
    await expect(checkStore(path, {})).resolves.toEqual({
      kind: "sqlite",
      location: path,
      schemaVersion: latestVersion(SQLITE_MIGRATIONS),
      problems: [],
    });
    truncateSync(path, 100_000);
    const truncated = await checkStore(path, {});
    expect(truncated.problems.length).toBeGreaterThan(0);
    expect(truncated.problems.join("\n")).not.toMatch(/\*\*\*|^ok$|the (table|column)/m);
    writeFileSync(path, "phone\n+447400100001\n");
    expect(await checkStore(path, {})).toEqual({ kind: "sqlite", location: path, problems: ["file is not a database"] });
  });

  it("finds the tables and columns an SQLite store lacks", async () => {
    const path = await sqliteStore();
    sqlite(path, "ALTER TABLE results DROP COLUMN city; DROP TABLE meta");
    expect((await checkStore(path, {})).problems).toEqual(["the table meta is missing", "the column results.city is missing"]);
  });

  it("reports a column of another type", () => {
    const expected = schemaShape([["runs", "id", "text"]]);
    expect(schemaProblems(expected, schemaShape([["runs", "id", "integer"]]))).toEqual(["the column runs.id is integer, not text"]);
  });

  it("compares a PostgreSQL store's tables and columns with what its migrations make", async () => {
    const url = await createTestDatabase();
    const location = new URL(url);
    location.password = "";
    const sound = await checkStore(url, {});
    expect(sound).toEqual({ kind: "postgres", location: location.href, schemaVersion: latestVersion(POSTGRES_MIGRATIONS), problems: [] });
    await pgQuery(url, "ALTER TABLE bulkcheck.results DROP COLUMN city; ALTER TABLE bulkcheck.runs ALTER COLUMN lease_pid TYPE text");
    expect((await checkStore(url, {})).problems).toEqual([
      "the column results.city is missing",
      "the column runs.lease_pid is text, not integer",
    ]);
  });
});

describe("a store of a newer schema", () => {
  it("is refused by SQLite as PostgreSQL refuses it, with the one error", async () => {
    const path = await sqliteStore();
    sqlite(path, "PRAGMA user_version = 99");
    const sqliteRefusal = openStore(path, {});
    await expect(sqliteRefusal).rejects.toBeInstanceOf(StoreTooNewError);
    await expect(sqliteRefusal).rejects.toThrow(
      new RegExp(`^The store at ${path} has schema version 99, newer than this bulkcheck knows \\(\\d+\\)\\.$`),
    );
    await expect(checkStore(path, {})).rejects.toBeInstanceOf(StoreTooNewError);

    const url = await createTestDatabase();
    opened.push(await openStore(url, {}));
    await pgQuery(url, "INSERT INTO bulkcheck.schema_version (version) VALUES (99)");
    const postgresRefusal = openStore(url, {});
    await expect(postgresRefusal).rejects.toBeInstanceOf(StoreTooNewError);
    await expect(postgresRefusal).rejects.toThrow(/has schema version 99, newer than this bulkcheck knows \(\d+\)\.$/);
  });
});

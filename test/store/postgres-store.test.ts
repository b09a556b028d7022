import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { basename, dirname, join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { passwordFromFile, postgresTarget } from "../../src/store/postgres-connection.js";
import { PostgresStore } from "../../src/store/postgres-store.js";
import { StoreUnavailableError, type Lease } from "../../src/store/store.js";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { collect, LEASE, newRun, recordedTask, SCOPE, storeContract } from "./store-contract.js";

/** This file's database (the test run's server is started once, by postgres-global-setup.ts). */
let databaseUrl: string;
let admin: pg.Client;
let unavailable: Error | undefined;
beforeAll(async () => {
  try {
    databaseUrl = await createTestDatabase();
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
  } catch (error) {
    unavailable = error as Error;
  }
});
// Without a server every test fails, each with the reason: none is skipped.
beforeEach(() => {
  if (unavailable !== undefined) throw unavailable;
});
afterAll(async () => {
  await admin?.end();
});

const opened: PostgresStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function openStore(url = databaseUrl, env: Record<string, string | undefined> = {}): Promise<PostgresStore> {
  const store = await PostgresStore.open(url, env);
  opened.push(store);
  return store;
}

/** The URL with its password taken out (and the password, to give it another way). */
function withoutPassword(url: string): { url: string; password: string } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = "";
  return { url: parsed.href, password };
}

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("the shared store", () => {
  storeContract({
    // Every test starts from empty tables in this file's database (the schema stays: a store migrates once).
    async emptyLocation() {
      await admin.query(`DO $$ BEGIN
          IF to_regnamespace('bulkcheck') IS NOT NULL THEN
            TRUNCATE bulkcheck.results, bulkcheck.tasks, bulkcheck.runs, bulkcheck.scopes, bulkcheck.erased_numbers, bulkcheck.erasures RESTART IDENTITY;
          END IF;
        END $$`);
      return databaseUrl;
    },
    open: (url) => PostgresStore.open(url, {}),
  });

  it("lets two connections race to open the same command's run: exactly one of them creates it", async () => {
    const stores = await Promise.all([openStore(), openStore(), openStore(), openStore()]);
    await admin.query("TRUNCATE bulkcheck.runs, bulkcheck.tasks, bulkcheck.results CASCADE");
    const answers = await Promise.all(
      stores.map((store, index) => store.runs.create(newRun({ id: `race-${index}` }), { host: "h", pid: index, nonce: "n" })),
    );
    expect(answers.filter((answer) => answer !== "exists")).toHaveLength(1);
  });

  it("gives a stale run's lease to one of two machines claiming it at once, under the run's row lock", async () => {
    const [first, second] = await Promise.all([openStore(), openStore()]);
    await admin.query("TRUNCATE bulkcheck.runs, bulkcheck.tasks, bulkcheck.results CASCADE");
    await first.runs.create(newRun(), LEASE);
    const claim = (store: PostgresStore, lease: Lease) =>
      store.runs.claim("r1", lease, "2026-11-27T10:05:00.000Z", "2026-11-27T10:01:00.000Z", () => true);
    const holders = await Promise.all([claim(first, { host: "a", pid: 1, nonce: "x" }), claim(second, { host: "b", pid: 1, nonce: "y" })]);
    expect(holders.filter((holder) => holder === undefined)).toHaveLength(1);
    const winner = (await first.runs.get("r1"))!.lease!;
    expect(holders).toContainEqual({ host: winner.host, pid: winner.pid, nonce: winner.nonce });
  });

  /**
   * Issue 35, point 4: VACUUM marks an erased row's space free without clearing it, so its
   * bytes stayed in the heap or the indexes, depending on where the row sat in its page.
   * Every file of every relation of the schema (tables, their indexes and TOAST tables, every
   * segment) is read after a CHECKPOINT. The test run's server runs on this machine; as root,
   * it runs as `nobody` (postgres-keeper.mjs), and its files are read as root.
   */
  it("forgets numbers: no byte of them is left in any file of the store's tables and indexes after a checkpoint", async () => {
    const store = await openStore();
    await admin.query("TRUNCATE bulkcheck.runs, bulkcheck.tasks, bulkcheck.results, bulkcheck.task_number_chunks CASCADE");
    const numbers = Array.from({ length: 3000 }, (_, i) => 447400100000 + i);
    const task = await recordedTask(
      store,
      "2026-11-20T10:00:00.000Z",
      numbers.map((number) => ({ identifier: String(number), values: ["true"] })),
    );
    await store.tasks.addNumbers(task.ref, numbers);
    // An autovacuum ANALYZE of these fresh rows holds a snapshot from before the forget, and the rewrite then copies
    // the deleted rows (docs/files-and-security.md); on a busy machine one came by now and then. None runs here.
    await admin.query("ALTER TABLE bulkcheck.results SET (autovacuum_enabled = false)");
    await admin.query("ALTER TABLE bulkcheck.task_number_chunks SET (autovacuum_enabled = false)");
    // Some numbers from every page of every relation: one early in its page, one late, one last.
    const forgotten = numbers.filter((_, i) => i % 97 === 0 || i % 101 === 100);
    const kept = 447400101043;
    const relationFiles = async (): Promise<Array<{ relation: string; bytes: Buffer }>> => {
      await admin.query("CHECKPOINT");
      const { rows } = await admin.query<{ relation: string; path: string }>(
        `SELECT relname AS relation, current_setting('data_directory') || '/' || pg_relation_filepath(c.oid) AS path FROM pg_class c
         WHERE c.relnamespace = 'bulkcheck'::regnamespace AND c.relkind IN ('r', 'i', 't') AND pg_relation_filepath(c.oid) IS NOT NULL
         UNION ALL
         SELECT c.relname || ' (its TOAST)', current_setting('data_directory') || '/' || pg_relation_filepath(t.oid) FROM pg_class c
         JOIN pg_class t ON t.oid = c.reltoastrelid WHERE c.relnamespace = 'bulkcheck'::regnamespace`,
      );
      return rows.flatMap(({ relation, path }) =>
        readdirSync(dirname(path))
          .filter((name) => name === basename(path) || name.startsWith(`${basename(path)}.`))
          .map((name) => ({ relation, bytes: readFileSync(join(dirname(path), name)) })),
      );
    };
    // A bigint as stored, and as a task's numbers hold it (big-endian, kept uncompressed).
    const asStored = (identifier: number) => {
      const bytes = Buffer.alloc(8);
      bytes.writeBigInt64LE(BigInt(identifier));
      const bigEndian = Buffer.alloc(8);
      bigEndian.writeBigInt64BE(BigInt(identifier));
      return [bytes, bigEndian];
    };
    const holding = (files: Array<{ relation: string; bytes: Buffer }>, identifier: number) => [
      ...new Set(files.filter(({ bytes }) => asStored(identifier).some((form) => bytes.includes(form))).map(({ relation }) => relation)),
    ];
    const relationsOfNumbers = ["results", "results_identifier", "results_pkey", "task_number_chunks (its TOAST)"];
    expect(holding(await relationFiles(), kept).sort()).toEqual(relationsOfNumbers);

    expect(await store.ledger.forget(forgotten.map(String))).toEqual({ results: forgotten.length });
    const files = await relationFiles();
    expect(forgotten.flatMap((identifier) => holding(files, identifier).map((relation) => `${identifier} in ${relation}`))).toEqual([]);
    // The search itself finds a number that is still there, in every relation that holds numbers.
    expect(holding(files, kept).sort()).toEqual(relationsOfNumbers);
    expect(await store.ledger.lookup([String(kept)])).toHaveLength(1);
  });

  it("says so when the store's user may not VACUUM the results (a table someone else owns): the rows are gone all the same", async () => {
    const owner = await openStore();
    await admin.query("TRUNCATE bulkcheck.runs, bulkcheck.tasks, bulkcheck.results CASCADE");
    await recordedTask(owner, "2026-11-20T10:00:00.000Z", [{ identifier: "447400100001", values: ["true"] }]);
    // A role granted the tables' rows, not their upkeep (roles belong to the whole server: a name of its own).
    const role = `granted_${randomBytes(4).toString("hex")}`;
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'granted-pw'`);
    await admin.query(`GRANT USAGE ON SCHEMA bulkcheck TO ${role}`);
    await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA bulkcheck TO ${role}`);
    const url = new URL(databaseUrl);
    url.username = role;
    url.password = "granted-pw";
    const granted = await openStore(url.href);
    const erased = await granted.ledger.forget(["447400100001"]);
    expect(erased).toEqual({ results: 1, uncleared: expect.stringContaining("vacuum") as string });
    expect(await owner.ledger.lookup(["447400100001"])).toEqual([]);
    expect(await owner.ledger.forget(["447400100001"])).toEqual({ results: 0 });
  });

  it("gives a cursor's connection back when its reader stops early, so readers never exhaust the pool", async () => {
    const store = await openStore();
    await admin.query("TRUNCATE bulkcheck.runs, bulkcheck.tasks, bulkcheck.results CASCADE");
    const rows = Array.from({ length: 25_000 }, (_, i) => ({ identifier: String(447400100000 + i), values: ["true"] }));
    const task = await recordedTask(store, "2026-11-20T10:00:00.000Z", rows);
    for (let reader = 0; reader < 10; reader++) {
      for await (const batch of store.ledger.ofTask(task.ref)) {
        expect(batch.length).toBeGreaterThan(0);
        break;
      }
    }
    expect(await collect(store.ledger.latest(SCOPE, "number_activity_batch"))).toHaveLength(25_000);
  });

  it("lets two processes migrate a new database at once: both open it, and each migration runs once", async () => {
    const url = await createTestDatabase();
    const storeModule = new URL("../../dist/store/postgres-store.js", import.meta.url).href;
    const script = `
      const { PostgresStore } = await import(${JSON.stringify(storeModule)});
      const store = await PostgresStore.open(process.env.STORE_URL, {});
      process.stdout.write(String(store.schemaVersion));
      await store.close();`;
    const migrate = () =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, STORE_URL: url } });
        let out = "";
        let err = "";
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, out, err }));
      });
    const outcomes = await Promise.all([migrate(), migrate(), migrate()]);
    expect(outcomes).toEqual(Array(3).fill({ code: 0, out: "4", err: "" }));
    const versions = new pg.Client({ connectionString: url });
    await versions.connect();
    const { rows } = await versions.query("SELECT version FROM bulkcheck.schema_version ORDER BY version");
    await versions.end();
    expect(rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }]);
  });

  it("fails fast with StoreUnavailableError when nothing answers at the URL, naming the store without its password", async () => {
    const url = `postgres://ana:s3cret-pw@127.0.0.1:${await closedPort()}/team?sslmode=disable`;
    const failure = await PostgresStore.open(url, {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as StoreUnavailableError).kind).toBe("unavailable");
    expect((failure as Error).message).toContain(`postgres://ana@127.0.0.1:`);
    expect(JSON.stringify(failure, Object.getOwnPropertyNames(failure))).not.toContain("s3cret-pw");
  });

  it("refuses a wrong password as a usage error that does not show it", async () => {
    const { url } = withoutPassword(databaseUrl);
    const wrong = new URL(url);
    wrong.password = "not-the-password";
    const failure = await PostgresStore.open(wrong.href, {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UsageError);
    expect((failure as Error).message).not.toContain("not-the-password");
    expect((failure as Error).message).toContain(url.replace(/\/$/, ""));
  });

  it("takes the password from PGPASSWORD, or from a password file only others cannot read, with no warning printed", async () => {
    const { url, password } = withoutPassword(databaseUrl);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      expect((await openStore(url, { PGPASSWORD: password })).location).toBe(url);
      const file = join(tempDir(), "pgpass");
      const { hostname, port, pathname, username } = new URL(url);
      writeFileSync(
        file,
        `# team store\n${hostname}:${port}:other:${username}:wrong\n*:${port}:${pathname.slice(1)}:${username}:${password.replace(/[:\\]/g, "\\$&")}\n`,
      );
      chmodSync(file, 0o600);
      await openStore(url, { PGPASSFILE: file });
      chmodSync(file, 0o644);
      await expect(PostgresStore.open(url, { PGPASSFILE: file })).rejects.toThrow(/asks for a password and none is set/);
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it("falls back to plain TCP with sslmode=prefer (the default) when the server has no TLS, and refuses it with sslmode=require", async () => {
    await openStore(databaseUrl);
    const required = new URL(databaseUrl);
    required.searchParams.set("sslmode", "require");
    await expect(PostgresStore.open(required.href, {})).rejects.toBeInstanceOf(UsageError);
  });

  it("reads sslmode as libpq does, and refuses URL parameters it does not know", () => {
    const ssl = (mode: string) => postgresTarget(`postgres://u@db.example/team?sslmode=${mode}`, {}).config.ssl;
    expect(ssl("disable")).toBe(false);
    expect(ssl("prefer")).toEqual({ rejectUnauthorized: false });
    expect(ssl("require")).toEqual({ rejectUnauthorized: false });
    expect(ssl("verify-ca")).toMatchObject({ checkServerIdentity: expect.any(Function) });
    expect(ssl("verify-full")).toEqual({});
    expect(() => ssl("sometimes")).toThrow(UsageError);
    expect(() => postgresTarget("postgres://u@db.example/team?sslmod=require", {})).toThrow(/sslmod/);
    const target = postgresTarget("postgresql://ana:p%40ss@[::1]:6543/?application_name=x", {});
    expect(target).toMatchObject({ location: "postgresql://ana@[::1]:6543/?application_name=x", sslMode: "prefer" });
    expect(target.config).toMatchObject({ host: "::1", port: 6543, user: "ana", database: "ana" });
  });

  it("reads the password file as libpq does: wildcards, escaped colons and backslashes, the first matching line", () => {
    const file = join(tempDir(), "pgpass");
    writeFileSync(
      file,
      ["# comment", "db.example:5432:other:ana:no", "db.example:*:team:ana:p\\:ss\\\\word:x", "*:*:*:*:fallback", ""].join("\n"),
    );
    chmodSync(file, 0o600);
    const target = { host: "db.example", port: 5432, database: "team", user: "ana" };
    expect(passwordFromFile({ PGPASSFILE: file }, target)).toBe("p:ss\\word:x");
    expect(passwordFromFile({ PGPASSFILE: file }, { ...target, user: "bo" })).toBe("fallback");
    expect(passwordFromFile({ PGPASSFILE: join(tempDir(), "missing") }, target)).toBeUndefined();
  });

  it("reports connections the server closed (a restart) as StoreUnavailableError, and connects again for the next operation", async () => {
    const store = await openStore();
    await store.tasks.maxRef();
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    // The statement in flight on a closed connection fails (the command ends with exit 7 and resumes later); none is lost quietly.
    const during = await store.tasks.maxRef().catch((error: unknown) => error);
    if (typeof during !== "number") expect(during).toBeInstanceOf(StoreUnavailableError);
    expect(await store.tasks.maxRef()).toBeGreaterThanOrEqual(0);
  });
});

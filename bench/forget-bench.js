// What `ledger forget` costs on a store of 1,000,000 results (issue 35, point 4), and what it
// leaves: a carrier result of ROWS numbers recorded with its task's numbers (as a run writes
// them before its upload), then one number forgotten, in the embedded SQLite store and in
// PostgreSQL on this machine (the server binaries from npm, PostgreSQL's default durability).
// On PostgreSQL forget deletes the rows and rewrites the tables (VACUUM FULL): the time of the
// plain VACUUM it did before is measured on the same store for comparison (prune still uses it).
// After each, every file of the store's relations is searched for the number's 8 bytes (after a
// CHECKPOINT; the server runs as `nobody` when this runs as root, and its files are read as
// root). Needs a build (`npm run build`). Prints JSON.
//   node bench/forget-bench.js [rows]     (default 1000000)
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";

const ROWS = Number(process.argv[2] ?? 1_000_000);
const FIRST = 447400000000;
const SCOPE = { baseUrl: "https://api.example.com", profile: "default" };
const COLUMNS = ["carrier", "underlying_carrier", "number_type", "country_code", "region", "city"];

const dist = new URL("../dist/store/", import.meta.url);
const { SqliteStore } = await import(new URL("sqlite-store.js", dist).href);
const { PostgresStore } = await import(new URL("postgres-store.js", dist).href);
const { ResultCollection } = await import(new URL("result-collection.js", dist).href);

async function seconds(work) {
  const started = performance.now();
  const value = await work();
  return { s: Number(((performance.now() - started) / 1000).toFixed(2)), value };
}

/** A finished task of ROWS numbers, its numbers written and its result recorded. */
async function fill(store) {
  const task = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "k", taskId: "t" });
  await store.tasks.update(task.ref, { status: "success", checkedAt: "2026-12-01T10:00:00.000Z" });
  await store.tasks.addNumbers(
    task.ref,
    Array.from({ length: ROWS }, (_, i) => FIRST + i),
  );
  const rows = new ResultCollection(COLUMNS);
  for (let at = 0; at < ROWS; at++) rows.add([String(FIRST + at), "EE", "EE", "mobile", "GB", "England", "London"]);
  await store.ledger.record(task.ref, rows, "2026-12-01T10:01:00.000Z");
}

function holds(bytes, number) {
  const little = Buffer.alloc(8);
  little.writeBigInt64LE(BigInt(number));
  const big = Buffer.alloc(8);
  big.writeBigInt64BE(BigInt(number));
  return bytes.includes(little) || bytes.includes(big) || bytes.includes(big.subarray(2)) || bytes.includes(Buffer.from(String(number)));
}

/** The relations (tables, indexes, TOAST) of the bulkcheck schema whose files hold `number`, after a checkpoint. */
async function postgresHolding(admin, number) {
  await admin.query("CHECKPOINT");
  const { rows } = await admin.query(
    `SELECT c.relname AS relation, current_setting('data_directory') || '/' || pg_relation_filepath(c.oid) AS path FROM pg_class c
     WHERE c.relnamespace = 'bulkcheck'::regnamespace AND c.relkind IN ('r', 'i') AND pg_relation_filepath(c.oid) IS NOT NULL
     UNION ALL
     SELECT t.relname, current_setting('data_directory') || '/' || pg_relation_filepath(t.oid) FROM pg_class c
     JOIN pg_class t ON t.oid IN (c.reltoastrelid, (SELECT indexrelid FROM pg_index WHERE indrelid = c.reltoastrelid))
     WHERE c.relnamespace = 'bulkcheck'::regnamespace`,
  );
  const found = new Set();
  for (const { relation, path } of rows) {
    for (const name of readdirSync(dirname(path))) {
      if (name !== basename(path) && !name.startsWith(`${basename(path)}.`)) continue;
      if (holds(readFileSync(join(dirname(path), name)), number)) found.add(relation);
    }
  }
  return [...found].sort();
}

function startPostgres() {
  const password = randomBytes(12).toString("base64url");
  const keeper = fork(fileURLToPath(new URL("../test/helpers/postgres-keeper.mjs", import.meta.url)), ["bench", password, "durable"]);
  return new Promise((resolve, reject) => {
    keeper.once("message", (message) =>
      message.port
        ? resolve({ url: `postgres://bench:${password}@127.0.0.1:${message.port}/postgres`, keeper })
        : reject(new Error(message.error)),
    );
    keeper.once("exit", () => reject(new Error("the PostgreSQL keeper exited")));
  });
}

const target = FIRST + Math.floor(ROWS / 2) + 7;

const dir = mkdtempSync(join(tmpdir(), "bulkcheck-forget-bench-"));
const path = join(dir, "bulkcheck.db");
const sqlite = SqliteStore.open(path);
await fill(sqlite);
const sqliteForget = await seconds(() => sqlite.ledger.forget([String(target)]));
await sqlite.close();
const sqliteFiles = readdirSync(dir).filter((name) => holds(readFileSync(join(dir, name)), target));
rmSync(dir, { recursive: true, force: true });

const server = await startPostgres();
const postgres = await PostgresStore.open(server.url, {});
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
await fill(postgres);
// The forget of before: the result's row deleted, then a plain VACUUM (ANALYZE).
const vacuumOnly = await seconds(async () => {
  await admin.query(`DELETE FROM bulkcheck.results WHERE identifier = ${target}`);
  await admin.query("VACUUM (ANALYZE) bulkcheck.results, bulkcheck.task_number_chunks");
});
const afterVacuum = await postgresHolding(admin, target);
const other = target + 1;
const rewrite = await seconds(() => postgres.ledger.forget([String(other)]));
const afterRewrite = await postgresHolding(admin, other);
await admin.end();
await postgres.close();
server.keeper.send("stop");

console.log(
  JSON.stringify(
    {
      rows: ROWS,
      task_numbers: ROWS,
      sqlite: { forget_s: sqliteForget.s, files_holding_number: sqliteFiles },
      postgres: {
        vacuum_s: vacuumOnly.s,
        relations_holding_number_after_vacuum: afterVacuum,
        forget_with_rewrite_s: rewrite.s,
        relations_holding_number_after_forget: afterRewrite,
      },
    },
    null,
    2,
  ),
);

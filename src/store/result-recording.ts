import { ERASED_FOR_TASK, ERASURE_LOCK, ErasedNumbers } from "./erasures.js";
import type { PostgresDb } from "./postgres-db.js";
import { RESULT_VALUE_COLUMNS } from "./result-values.js";
import type { KeyOrderedResults } from "./store.js";
import { numbered } from "./sql-session.js";
import type { SqliteDb, SqlValue } from "./sqlite-db.js";

/*
 * The one way results enter the ledger (Ledger.record), for each engine: a task's rows in key
 * order straight into `results`, leaving out the numbers `ledger forget` erased since the task
 * was given them (see erasures.ts), and the task marked recorded in the last transaction, so
 * its rows count from then on. A kill at any moment leaves the task unrecorded (a later
 * recording keeps the rows already there, never doubling one) or recorded whole.
 */

/** The task a result is recorded for: its reference, its result's columns after `identifier`, and the moment it counts from. */
export interface RecordedTask {
  ref: number;
  columns: readonly string[];
  at: string;
}

/** The stored values' columns, in the order KeyOrderedResults gives them (see splitValues). */
const VALUE_COLUMNS = [...RESULT_VALUE_COLUMNS, "extra"] as const;

/** A result counts once its task is marked recorded: the rule, written once for both engines. */
const MARK_RECORDED = "UPDATE tasks SET recorded_at = ?, columns = ? WHERE ref = ?";
const markRecordedParams = (task: RecordedTask) => [task.at, JSON.stringify(task.columns), task.ref];

/** The rows to insert among positions [first, end): every one but those of numbers forgotten since the task was given them. */
function keptPositions(rows: KeyOrderedResults, first: number, end: number, erased: ErasedNumbers | undefined): number[] {
  const kept: number[] = [];
  for (let at = first; at < end; at++) if (!erased?.has(rows.identifierAt(at))) kept.push(at);
  return kept;
}

/** SQLite: rows per multi-row INSERT: far fewer calls into SQLite, and well under its limit of 32,766 bound values. */
const SQLITE_ROWS_PER_STATEMENT = 1000;
/**
 * SQLite: rows per transaction: a few per million, each holding the write lock a fraction of
 * a second (other processes wait for it within the busy timeout), each commit synced.
 */
const SQLITE_ROWS_PER_TRANSACTION = 100_000;
/**
 * SQLite: page cache per row of a transaction: the pages a transaction dirties (the rows, ~70
 * bytes each, and the identifier index) stay in memory until its commit. SQLite's default 2 MB
 * spills them midway, which made a million rows take several times as long.
 */
const CACHE_BYTES_PER_ROW = 160;

/**
 * Records a task's result in the embedded ledger: a few transactions, the last of which also
 * marks the task recorded.
 *
 * Binding values is most of the cost through libsql (a million rows of ten values took 2.5 s
 * against 1.1 s for SQLite inserting the same rows from a query), so only the number and the
 * columns some row fills are bound: the task's reference is part of the statement, and a
 * column no row has (the carrier columns of a signal result, `extra` of most) is left NULL.
 */
export function recordIntoSqlite(db: SqliteDb, rows: KeyOrderedResults, task: RecordedTask): void {
  const cacheBefore = String(db.row("PRAGMA cache_size")![0]);
  db.exec(`PRAGMA cache_size = -${Math.ceil((Math.min(rows.size, SQLITE_ROWS_PER_TRANSACTION) * CACHE_BYTES_PER_ROW) / 1024) + 2048}`);
  try {
    const filled = rows.filledColumns();
    const rowValues = 1 + filled.length;
    const placeholders = `(${Math.trunc(task.ref)}, ${Array(rowValues).fill("?").join(", ")})`;
    // A row a recording cut short left in the ledger (the task not yet marked recorded) is kept, not doubled.
    const insert = `INSERT OR IGNORE INTO results (task_ref, identifier${filled.map((at) => `, ${VALUE_COLUMNS[at]}`).join("")}) VALUES `;
    const insertMany = insert + Array(SQLITE_ROWS_PER_STATEMENT).fill(placeholders).join(", ");
    const insertOne = insert + placeholders;
    const many = new Array<SqlValue>(SQLITE_ROWS_PER_STATEMENT * rowValues);
    const one = new Array<SqlValue>(rowValues);
    const fill = (values: SqlValue[], offset: number, position: number) => {
      values[offset] = rows.identifierAt(position);
      const stored = rows.valuesAt(position);
      for (let at = 0; at < filled.length; at++) values[offset + 1 + at] = stored[filled[at]!]!;
    };
    for (let first = 0; ; first += SQLITE_ROWS_PER_TRANSACTION) {
      const end = Math.min(rows.size, first + SQLITE_ROWS_PER_TRANSACTION);
      db.transaction(() => {
        const kept = keptPositions(rows, first, end, ErasedNumbers.of(db.rows(ERASED_FOR_TASK, [task.ref, task.ref])));
        let next = 0;
        for (; next + SQLITE_ROWS_PER_STATEMENT <= kept.length; next += SQLITE_ROWS_PER_STATEMENT) {
          for (let row = 0; row < SQLITE_ROWS_PER_STATEMENT; row++) fill(many, row * rowValues, kept[next + row]!);
          db.run(insertMany, many);
        }
        for (; next < kept.length; next++) {
          fill(one, 0, kept[next]!);
          db.run(insertOne, one);
        }
        if (end === rows.size) db.run(MARK_RECORDED, markRecordedParams(task));
      });
      if (end === rows.size) break;
    }
  } finally {
    db.exec(`PRAGMA cache_size = ${Number(cacheBefore)}`);
  }
  // The rows wait in the write-ahead log until a checkpoint copies them into the file; done here,
  // by the connection that recorded (a worker's), rather than by whichever closes last.
  db.exec("PRAGMA wal_checkpoint(PASSIVE)");
}

/** PostgreSQL: rows encoded per piece of the COPY stream (a few hundred kilobytes each). */
const POSTGRES_ROWS_PER_PIECE = 10_000;
const POSTGRES_COLUMNS = `task_ref, identifier, ${VALUE_COLUMNS.join(", ")}`;
const UNIQUE_VIOLATION = "23505";

/**
 * Records a task's result in a team's ledger in one transaction. The numbers forgotten since
 * the task was given them are read under the lock a forget takes alone.
 *
 * The rows go in with COPY: 1,000,000 carrier rows in 4.1 s against 15.0 s as INSERTs of JSON
 * arrays (`node bench/store-bench.js`). COPY stops at a row already there, which happens only
 * when another process recorded the same task meanwhile: then the rows go through a temporary
 * table, and only those not there yet are added.
 */
export async function recordIntoPostgres(db: PostgresDb, rows: KeyOrderedResults, task: RecordedTask): Promise<void> {
  await db.transaction(async ({ query, copyIn }) => {
    await query(`SELECT pg_advisory_xact_lock_shared(${ERASURE_LOCK})`);
    const erased = ErasedNumbers.of(await query(numbered(ERASED_FOR_TASK), [task.ref, task.ref]));
    // Encoded a piece at a time as COPY sends them, so the next is encoded while the server stores the last.
    function* lines(): Iterable<string> {
      for (let first = 0; first < rows.size; first += POSTGRES_ROWS_PER_PIECE) {
        let piece = "";
        for (const at of keptPositions(rows, first, Math.min(rows.size, first + POSTGRES_ROWS_PER_PIECE), erased)) {
          piece += `${task.ref}\t${rows.identifierAt(at)}\t${rows.valuesAt(at).map(copyText).join("\t")}\n`;
        }
        yield piece;
      }
    }
    await query("SAVEPOINT copy_results");
    try {
      await copyIn(`COPY results (${POSTGRES_COLUMNS}) FROM STDIN`, lines());
      await query("RELEASE SAVEPOINT copy_results");
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      await query("ROLLBACK TO SAVEPOINT copy_results");
      await query("CREATE TEMPORARY TABLE incoming_results (LIKE results) ON COMMIT DROP");
      await copyIn(`COPY incoming_results (${POSTGRES_COLUMNS}) FROM STDIN`, lines());
      await query(
        `INSERT INTO results (${POSTGRES_COLUMNS}) SELECT ${POSTGRES_COLUMNS} FROM incoming_results ORDER BY identifier ON CONFLICT DO NOTHING`,
      );
    }
    await query(numbered(MARK_RECORDED), markRecordedParams(task));
  });
}

/**
 * A value in COPY's text format: `\N` for NULL, and the four characters that would end a
 * field or a row early (backslash, tab, line feed, carriage return) escaped.
 */
function copyText(value: string | null): string {
  return value === null ? "\\N" : COPY_ESCAPED.test(value) ? value.replace(COPY_ESCAPED_ALL, escapeCopy) : value;
}

const COPY_ESCAPED = /[\\\t\n\r]/;
const COPY_ESCAPED_ALL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
const escapeCopy = (char: string) => COPY_ESCAPES[char]!;

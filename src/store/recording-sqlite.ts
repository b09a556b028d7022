import { ERASED_FOR_TASK, ErasedNumbers } from "./erasures.js";
import type { KeyOrderedResults } from "./result-values.js";
import { RESULT_VALUE_COLUMNS } from "./result-values.js";
import { SqliteDb, type SqlValue } from "./sqlite-db.js";

/** The task a result is recorded for: its reference, its result's columns after `identifier`, and the moment it counts from. */
export interface RecordedTask {
  ref: number;
  columns: readonly string[];
  at: string;
}

/** Rows per multi-row INSERT: far fewer calls into SQLite, and well under its limit of 32,766 bound values. */
const ROWS_PER_STATEMENT = 1000;
/**
 * Rows per transaction: a few per million, each holding the write lock a fraction of a
 * second (other processes wait for it within the busy timeout), each commit synced.
 */
const ROWS_PER_TRANSACTION = 100_000;
/**
 * Page cache per row of a transaction: the pages a transaction dirties (the rows, ~70 bytes
 * each, and the identifier index) stay in memory until its commit. SQLite's default 2 MB
 * spills them midway, which made a million rows take several times as long.
 */
const CACHE_BYTES_PER_ROW = 160;
/** The stored values' columns, in the order KeyOrderedResults gives them (see splitValues). */
const VALUE_COLUMNS = [...RESULT_VALUE_COLUMNS, "extra"];

/**
 * Records a task's result in the embedded ledger at `path` on a connection of its own (a
 * worker's: see record-worker.ts): the rows in key order straight into `results`, a few
 * transactions, the last of which also marks the task recorded. A kill at any moment leaves
 * the task unrecorded (a later run records it again, keeping rows already there) or recorded
 * whole.
 *
 * Binding values is most of the cost through libsql (a million rows of ten values took 2.5 s
 * against 1.1 s for SQLite inserting the same rows from a query), so only the number and the
 * columns some row fills are bound: the task's reference is part of the statement, and a
 * column no row has (the carrier columns of a signal result, `extra` of most) is left NULL.
 */
export function recordIntoSqlite(path: string, rows: KeyOrderedResults, task: RecordedTask): void {
  const db = SqliteDb.open(path);
  try {
    db.exec(`PRAGMA cache_size = -${Math.ceil((Math.min(rows.size, ROWS_PER_TRANSACTION) * CACHE_BYTES_PER_ROW) / 1024) + 2048}`);
    const filled = rows.filledColumns();
    const rowValues = 1 + filled.length;
    const placeholders = `(${Math.trunc(task.ref)}, ${Array(rowValues).fill("?").join(", ")})`;
    // A row a recording cut short left in the ledger (the task not yet marked recorded) is kept, not doubled.
    const insert = `INSERT OR IGNORE INTO results (task_ref, identifier${filled.map((at) => `, ${VALUE_COLUMNS[at]}`).join("")}) VALUES `;
    const insertMany = insert + Array(ROWS_PER_STATEMENT).fill(placeholders).join(", ");
    const insertOne = insert + placeholders;
    const many = new Array<SqlValue>(ROWS_PER_STATEMENT * rowValues);
    const one = new Array<SqlValue>(rowValues);
    const fill = (values: SqlValue[], offset: number, position: number) => {
      values[offset] = rows.identifierAt(position);
      const stored = rows.valuesAt(position);
      for (let at = 0; at < filled.length; at++) values[offset + 1 + at] = stored[filled[at]!]!;
    };
    for (let first = 0; ; first += ROWS_PER_TRANSACTION) {
      const end = Math.min(rows.size, first + ROWS_PER_TRANSACTION);
      db.transaction(() => {
        // The rows to insert: every one but those of numbers forgotten since the task was given them.
        const erased = ErasedNumbers.of(db.rows(ERASED_FOR_TASK, [task.ref, task.ref]));
        const kept: number[] = [];
        for (let at = first; at < end; at++) if (!erased?.has(rows.identifierAt(at))) kept.push(at);
        let next = 0;
        for (; next + ROWS_PER_STATEMENT <= kept.length; next += ROWS_PER_STATEMENT) {
          for (let row = 0; row < ROWS_PER_STATEMENT; row++) fill(many, row * rowValues, kept[next + row]!);
          db.run(insertMany, many);
        }
        for (; next < kept.length; next++) {
          fill(one, 0, kept[next]!);
          db.run(insertOne, one);
        }
        if (end === rows.size)
          db.run("UPDATE tasks SET recorded_at = ?, columns = ? WHERE ref = ?", [task.at, JSON.stringify(task.columns), task.ref]);
      });
      if (end === rows.size) break;
    }
    // The rows wait in the write-ahead log until a checkpoint copies them into the file; done here,
    // in the worker, rather than by whichever connection closes last (the command's main thread).
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } finally {
    db.close();
  }
}

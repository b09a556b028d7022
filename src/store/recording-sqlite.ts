import type { KeyOrderedResults } from "./result-values.js";
import { RESULT_VALUE_COLUMNS } from "./sqlite-schema.js";
import { SqliteDb, type SqlValue } from "./sqlite-db.js";

/** The task a result is recorded for: its reference, its result's columns after `identifier`, and the moment it counts from. */
export interface RecordedTask {
  ref: number;
  columns: readonly string[];
  at: string;
}

/** Values bound per row: its task, its number, the value columns and `extra`. */
const ROW_VALUES = RESULT_VALUE_COLUMNS.length + 3;
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
const COLUMNS = `task_ref, identifier, ${RESULT_VALUE_COLUMNS.join(", ")}, extra`;
const ROW_PLACEHOLDERS = `(${Array(ROW_VALUES).fill("?").join(", ")})`;
/** A row a recording cut short left in the ledger (the task not yet marked recorded) is kept, not doubled. */
const INSERT = `INSERT OR IGNORE INTO results (${COLUMNS}) VALUES `;
const INSERT_ONE = INSERT + ROW_PLACEHOLDERS;
const INSERT_MANY = INSERT + Array(ROWS_PER_STATEMENT).fill(ROW_PLACEHOLDERS).join(", ");

/**
 * Records a task's result in the embedded ledger at `path` on a connection of its own (a
 * worker's: see record-worker.ts): the rows in key order straight into `results`, a few
 * transactions, the last of which also marks the task recorded. A kill at any moment leaves
 * the task unrecorded (a later run records it again, keeping rows already there) or recorded
 * whole.
 */
export function recordIntoSqlite(path: string, rows: KeyOrderedResults, task: RecordedTask): void {
  const db = SqliteDb.open(path);
  try {
    db.exec(`PRAGMA cache_size = -${Math.ceil((Math.min(rows.size, ROWS_PER_TRANSACTION) * CACHE_BYTES_PER_ROW) / 1024) + 2048}`);
    const many: SqlValue[] = new Array<SqlValue>(ROWS_PER_STATEMENT * ROW_VALUES);
    const one: SqlValue[] = new Array<SqlValue>(ROW_VALUES);
    for (let first = 0; ; first += ROWS_PER_TRANSACTION) {
      const end = Math.min(rows.size, first + ROWS_PER_TRANSACTION);
      db.transaction(() => {
        let at = first;
        for (; at + ROWS_PER_STATEMENT <= end; at += ROWS_PER_STATEMENT) {
          for (let row = 0; row < ROWS_PER_STATEMENT; row++) fillRow(many, row * ROW_VALUES, rows, at + row, task.ref);
          db.run(INSERT_MANY, many);
        }
        for (; at < end; at++) {
          fillRow(one, 0, rows, at, task.ref);
          db.run(INSERT_ONE, one);
        }
        if (end === rows.size)
          db.run("UPDATE tasks SET recorded_at = ?, columns = ? WHERE ref = ?", [task.at, JSON.stringify(task.columns), task.ref]);
      });
      if (end === rows.size) return;
    }
  } finally {
    db.close();
  }
}

function fillRow(values: SqlValue[], offset: number, rows: KeyOrderedResults, position: number, taskRef: number): void {
  values[offset] = taskRef;
  values[offset + 1] = rows.identifierAt(position);
  const stored = rows.valuesAt(position);
  for (let column = 0; column < stored.length; column++) values[offset + 2 + column] = stored[column]!;
}

import { ERASED_FOR_TASK, ERASURE_LOCK, ErasedNumbers } from "./erasures.js";
import type { PostgresDb } from "./postgres-db.js";
import { RESULT_VALUE_COLUMNS } from "./result-values.js";
import type { KeyOrderedResults, StoredValue } from "./store.js";
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

/** The distinct value tuples of a recording, each written once into a table only the recording's connection sees (TEMP). */
const CREATE_TUPLES = `CREATE TEMP TABLE IF NOT EXISTS recorded_tuples (id INTEGER PRIMARY KEY, ${VALUE_COLUMNS.join(", ")})`;

/**
 * Records a task's result in the embedded ledger: a few transactions, the last of which also
 * marks the task recorded.
 *
 * Binding values is most of the cost through libsql, strings above all (a million rows of a
 * number and six strings: 3.4 s; of two integers: 1.8 s, both into the ledger's two B-trees).
 * Results repeat their values (a few carriers, types, regions), so each distinct tuple of
 * values is written once into `recorded_tuples`, and a row binds only its number and its
 * tuple's id; SQLite joins them as it inserts.
 */
export function recordIntoSqlite(db: SqliteDb, rows: KeyOrderedResults, task: RecordedTask): void {
  const cacheBefore = String(db.row("PRAGMA cache_size")![0]);
  db.exec(`PRAGMA cache_size = -${Math.ceil((Math.min(rows.size, SQLITE_ROWS_PER_TRANSACTION) * CACHE_BYTES_PER_ROW) / 1024) + 2048}`);
  try {
    db.exec(CREATE_TUPLES);
    db.run("DELETE FROM temp.recorded_tuples");
    /** Each distinct values array the rows hand out (rows with the same values share one: see ResultCollection.valuesAt), by its id. */
    const tupleIds = new Map<readonly StoredValue[], number>();
    // A row a recording cut short left in the ledger (the task not yet marked recorded) is kept, not doubled.
    const insertRows = (count: number) =>
      `INSERT OR IGNORE INTO results (task_ref, identifier, ${VALUE_COLUMNS.join(", ")}) ` +
      `SELECT ${Math.trunc(task.ref)}, row.column1, ${VALUE_COLUMNS.map((column) => `tuple.${column}`).join(", ")} ` +
      `FROM (VALUES ${Array(count).fill("(?, ?)").join(", ")}) AS row JOIN temp.recorded_tuples AS tuple ON tuple.id = row.column2`;
    const tuplePlaceholders = `(${Array(1 + VALUE_COLUMNS.length)
      .fill("?")
      .join(", ")})`;
    const insertTuples = (count: number) => `INSERT INTO temp.recorded_tuples VALUES ${Array(count).fill(tuplePlaceholders).join(", ")}`;
    for (let first = 0; ; first += SQLITE_ROWS_PER_TRANSACTION) {
      const end = Math.min(rows.size, first + SQLITE_ROWS_PER_TRANSACTION);
      db.transaction(() => {
        const kept = keptPositions(rows, first, end, ErasedNumbers.of(db.rows(ERASED_FOR_TASK, [task.ref, task.ref])));
        const newTuples: (readonly StoredValue[])[] = [];
        for (const position of kept) {
          const values = rows.valuesAt(position);
          if (tupleIds.has(values)) continue;
          tupleIds.set(values, tupleIds.size);
          newTuples.push(values);
        }
        insertInStatements(db, insertTuples, newTuples.length, (values, offset, at) => {
          const tuple = newTuples[at]!;
          values[offset] = tupleIds.get(tuple)!;
          for (let column = 0; column < tuple.length; column++) values[offset + 1 + column] = tuple[column]!;
        });
        insertInStatements(db, insertRows, kept.length, (values, offset, at) => {
          values[offset] = rows.identifierAt(kept[at]!);
          values[offset + 1] = tupleIds.get(rows.valuesAt(kept[at]!))!;
        });
        if (end === rows.size) db.run(MARK_RECORDED, markRecordedParams(task));
      });
      if (end === rows.size) break;
    }
  } finally {
    db.exec("DROP TABLE IF EXISTS temp.recorded_tuples");
    db.exec(`PRAGMA cache_size = ${Number(cacheBefore)}`);
  }
  // The rows wait in the write-ahead log until a checkpoint copies them into the file; done here,
  // by the connection that recorded (a worker's), rather than by whichever closes last.
  db.exec("PRAGMA wal_checkpoint(PASSIVE)");
}

/**
 * Inserts `count` rows with the statement `sql(n)` makes for n rows, SQLITE_ROWS_PER_STATEMENT
 * at a time; `fill` writes the `at`th row's values into `values` from `offset`.
 */
function insertInStatements(
  db: SqliteDb,
  sql: (rows: number) => string,
  count: number,
  fill: (values: SqlValue[], offset: number, at: number) => void,
): void {
  const values: SqlValue[] = [];
  let full: string | undefined;
  for (let first = 0; first < count; first += SQLITE_ROWS_PER_STATEMENT) {
    const rowsNow = Math.min(SQLITE_ROWS_PER_STATEMENT, count - first);
    values.length = 0;
    for (let row = 0; row < rowsNow; row++) fill(values, values.length, first + row);
    db.run(rowsNow === SQLITE_ROWS_PER_STATEMENT ? (full ??= sql(rowsNow)) : sql(rowsNow), values);
  }
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

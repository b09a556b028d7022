import { statSync } from "node:fs";
import { SqlLedger } from "./ledger-store.js";
import { identifierNumber, RESULT_VALUE_COLUMNS, splitValues } from "./result-values.js";
import { SqlRunStore } from "./run-store.js";
import { ScopeIds, type Dialect, type SqlParam, type SqlSession } from "./sql-session.js";
import { SqliteDb, type SqlValue } from "./sqlite-db.js";
import type { ColumnValue, ResultRow, Scope, Store, StoreParts } from "./store.js";
import { SqlTaskStore } from "./task-store.js";

/** Rows read per query when streaming. */
const BATCH_ROWS = 5000;
/** Identifiers read per query, as one JSON array (see resultIdentifierPages). */
const IDENTIFIER_PAGE = 50_000;

/**
 * The identifiers of a task's results, a page at a time in number order (within a page, as
 * the ordered subquery feeds them: callers use them as sets), each page read as one JSON
 * array: libsql hands rows over one by one, and a million numbers took 3–5× as long as rows
 * as they do as pages (planning reads millions). An ORDER BY inside the aggregate would sort
 * every page again: twice the time.
 */
function* resultIdentifierPages(db: SqliteDb, taskRef: number): Generator<number[]> {
  for (let after = -1; ;) {
    const [json, last] = db.row(
      `SELECT json_group_array(identifier), max(identifier)
       FROM (SELECT identifier FROM results WHERE task_ref = ? AND identifier > ? ORDER BY identifier LIMIT ?)`,
      [taskRef, after, IDENTIFIER_PAGE],
    )!;
    if (last === null) return;
    after = Number(last);
    yield JSON.parse(String(json)) as number[];
  }
}

/** What SQLite writes its own way. */
const SQLITE: Dialect = {
  jsonText: (column) => column,
  flag: (column) => column,
  numberTable: "json_each(?)",
  inNumbers: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  numbers: (values) => JSON.stringify(values),
  instant: (iso) => iso,
  noLimit: -1,
  lockRow: "",
  runsAdded: "r.rowid",
  isUniqueViolation: (error) => /^SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)$/.test(String((error as { code?: unknown } | undefined)?.code)),
  // A transaction takes the write lock as it begins (IMMEDIATE): an erasure and a recording take turns already.
  lockErasures: undefined,
};

/** The store's one connection as the shared parts use it; its statements run synchronously. */
class SqliteSession implements SqlSession {
  readonly dialect = SQLITE;

  constructor(
    readonly db: SqliteDb,
    private readonly scopes: ScopeIds,
  ) {}

  rows(sql: string, params: readonly SqlParam[] = []): Promise<ColumnValue[][]> {
    return new Promise((resolve) => resolve(this.db.rows(sql, bound(params))));
  }

  row(sql: string, params: readonly SqlParam[] = []): Promise<ColumnValue[] | undefined> {
    return new Promise((resolve) => resolve(this.db.row(sql, bound(params))));
  }

  run(sql: string, params: readonly SqlParam[] = []): Promise<number> {
    return new Promise((resolve) => resolve(this.db.run(sql, bound(params)).changes));
  }

  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.db.unitOfWork(async () => {
      try {
        return await work(this);
      } catch (error) {
        // A scope added in it is gone with it, before another unit of work may look one up (PostgreSQL adds scopes outside any transaction).
        this.scopes.clear();
        throw error;
      }
    });
  }

  scopeId(scope: Scope): Promise<number> {
    return this.scopes.of(scope, this);
  }
}

function bound(params: readonly SqlParam[]): SqlValue[] {
  return params.map((value) => (typeof value === "boolean" ? Number(value) : value));
}

class SqliteLedger extends SqlLedger {
  constructor(
    private readonly db: SqliteDb,
    session: SqlSession,
  ) {
    super(session);
  }

  /**
   * A result's rows wait in a TEMP table of this connection (appended in the order they
   * come, so no lock on the file and no index) until markRecorded moves them into the
   * ledger sorted by number. Inserted in a list's own order, every batch would land all
   * over both B-trees of `results` (the key and the identifier index): a million rows of a
   * shuffled list took 76 s to record against 7 s for the same numbers in order.
   */
  add(taskRef: number, columns: readonly string[], rows: readonly ResultRow[]): Promise<void> {
    const split = splitValues(columns);
    const values: SqlValue[] = [];
    for (const row of rows) {
      const identifier = identifierNumber(row.identifier);
      if (identifier !== undefined) values.push(taskRef, identifier, ...split(row.values));
    }
    const count = values.length / ROW_VALUES;
    this.#createIncoming();
    // Full statements of a thousand rows each (far fewer calls into SQLite), then the rest one row at a time.
    this.db.temporaryTransaction(() => {
      const full = Math.floor(count / RECORD_ROWS_PER_STATEMENT) * RECORD_ROWS_PER_STATEMENT;
      for (let row = 0; row < full; row += RECORD_ROWS_PER_STATEMENT) {
        this.db.run(INSERT_MANY_INCOMING, values.slice(row * ROW_VALUES, (row + RECORD_ROWS_PER_STATEMENT) * ROW_VALUES));
      }
      for (let row = full; row < count; row++) this.db.run(INSERT_ONE_INCOMING, values.slice(row * ROW_VALUES, (row + 1) * ROW_VALUES));
    });
    return Promise.resolve();
  }

  /**
   * Moves the task's waiting rows into the ledger in number order (SQLite sorts them in its
   * TEMP space, not in memory here), a slice per transaction so other processes are kept
   * waiting a fraction of a second at most, then marks the result recorded. Rows a
   * recording cut short left in the ledger are kept (OR IGNORE), not doubled.
   */
  markRecorded(taskRef: number, columns: readonly string[], at: string): Promise<void> {
    this.#createIncoming();
    this.db.temporaryTransaction(() => {
      this.db.run("DELETE FROM temp.ordered_results");
      this.db.run(`INSERT INTO temp.ordered_results SELECT * FROM temp.incoming_results WHERE task_ref = ? ORDER BY identifier, rowid`, [
        taskRef,
      ]);
      this.db.run("DELETE FROM temp.incoming_results WHERE task_ref = ?", [taskRef]);
    });
    const last = Number(this.db.row("SELECT coalesce(max(rowid), 0) FROM temp.ordered_results")![0]);
    for (let after = 0; after < last; after += MOVE_ROWS_PER_TRANSACTION) {
      this.db.transaction(() => this.db.run(MOVE_ORDERED_SLICE, [after, after + MOVE_ROWS_PER_TRANSACTION]));
    }
    this.db.temporaryTransaction(() => this.db.run("DELETE FROM temp.ordered_results"));
    this.db.run("UPDATE tasks SET recorded_at = ?, columns = ? WHERE ref = ?", [at, JSON.stringify(columns), taskRef]);
    return Promise.resolve();
  }

  /** The connection's TEMP tables where results wait for markRecorded (`ordered_results` is emptied before it is filled, so its rowids run 1, 2, … in number order). */
  #createIncoming(): void {
    this.db.exec(`CREATE TEMP TABLE IF NOT EXISTS incoming_results (${RESULT_COLUMNS_DECLARED});
      CREATE TEMP TABLE IF NOT EXISTS ordered_results (${RESULT_COLUMNS_DECLARED})`);
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the store's interfaces are asynchronous (PostgreSQL); SQLite reads in batches synchronously
  protected async *resultNumbers(taskRef: number): AsyncIterable<readonly number[]> {
    yield* resultIdentifierPages(this.db, taskRef);
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the store's interfaces are asynchronous (PostgreSQL); SQLite reads in batches synchronously
  protected async *resultPages(taskRef: number): AsyncIterable<ColumnValue[][]> {
    for (let after = -1; ;) {
      // A page as one JSON array of rows, as resultIdentifierPages reads numbers: half the time of a million rows handed over one by one.
      const [json, last] = this.db.row(
        `SELECT json_group_array(json_array(${this.resultColumns})), max(r.identifier)
         FROM (SELECT * FROM results WHERE task_ref = ? AND identifier > ? ORDER BY identifier LIMIT ?) r`,
        [taskRef, after, BATCH_ROWS],
      )!;
      if (last === null) return;
      after = Number(last);
      yield JSON.parse(String(json)) as ColumnValue[][];
    }
  }

  /**
   * secure_delete zeroed the erased rows in the file (a rewrite adds nothing to that); the
   * write-ahead log holds the pages as they were until this checkpoint empties it.
   */
  protected clearErased(): Promise<undefined> {
    this.db.checkpoint();
    return Promise.resolve(undefined);
  }

  protected bytes(): Promise<number> {
    return Promise.resolve(
      ["", "-wal"].reduce((sum, suffix) => sum + (statSync(this.db.path + suffix, { throwIfNoEntry: false })?.size ?? 0), 0),
    );
  }
}

/** The embedded store: one SQLite file in the state directory (see SqliteDb). */
export class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly runs: SqlRunStore;
  readonly tasks: SqlTaskStore;
  readonly ledger: SqliteLedger;
  readonly #db: SqliteDb;
  readonly #session: SqliteSession;

  private constructor(db: SqliteDb) {
    this.#db = db;
    this.#session = new SqliteSession(db, new ScopeIds());
    this.runs = new SqlRunStore(this.#session);
    this.tasks = new SqlTaskStore(this.#session);
    this.ledger = new SqliteLedger(db, this.#session);
  }

  static open(path: string): SqliteStore {
    return new SqliteStore(SqliteDb.open(path));
  }

  get location(): string {
    return this.#db.path;
  }

  get schemaVersion(): number {
    return this.#db.schemaVersion;
  }

  /** Writes a consistent copy of the store into `into`, an empty or missing file, while other processes use it (see SqliteDb.backup). */
  backup(into: string): void {
    this.#db.backup(into);
  }

  /** One connection: the parts write through it whether in a transaction or not. */
  transaction<T>(work: (parts: StoreParts) => Promise<T>): Promise<T> {
    return this.#session.transaction(() => work(this));
  }

  /** The transaction's write lock serialises every claim: SQLite has one writer at a time. */
  claim<T>(_scope: Scope, _product: string, work: (parts: StoreParts) => Promise<T>): Promise<T> {
    return this.transaction(work);
  }

  close(): Promise<void> {
    this.#db.close();
    return Promise.resolve();
  }
}

/** Values bound per result row: its task, its number, the value columns and `extra`. */
const ROW_VALUES = RESULT_VALUE_COLUMNS.length + 3;
/** Rows per multi-row INSERT: far fewer calls into SQLite, and well under its limit of 32,766 bound values. */
const RECORD_ROWS_PER_STATEMENT = 1000;
const RESULT_COLUMNS = `task_ref, identifier, ${RESULT_VALUE_COLUMNS.join(", ")}, extra`;
const RESULT_COLUMNS_DECLARED = `task_ref INTEGER, identifier INTEGER, ${RESULT_VALUE_COLUMNS.map((column) => `${column} TEXT`).join(", ")}, extra TEXT`;
const INSERT_INCOMING = `INSERT INTO temp.incoming_results (${RESULT_COLUMNS}) VALUES `;
const ROW_PLACEHOLDERS = `(${Array(ROW_VALUES).fill("?").join(", ")})`;
const INSERT_ONE_INCOMING = INSERT_INCOMING + ROW_PLACEHOLDERS;
const INSERT_MANY_INCOMING = INSERT_INCOMING + Array(RECORD_ROWS_PER_STATEMENT).fill(ROW_PLACEHOLDERS).join(", ");
/** Rows moved into the ledger per transaction: a fraction of a second of the write lock. */
const MOVE_ROWS_PER_TRANSACTION = 50_000;
const MOVE_ORDERED_SLICE = `INSERT OR IGNORE INTO results (${RESULT_COLUMNS})
  SELECT ${RESULT_COLUMNS} FROM temp.ordered_results WHERE rowid > ? AND rowid <= ? ORDER BY rowid`;

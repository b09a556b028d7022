import { statSync } from "node:fs";
import { SqlLedger } from "./ledger-store.js";
import { recordIntoSqlite } from "./result-recording.js";
import { SqlRunStore } from "./run-store.js";
import { ScopeIds, type Dialect, type SqlParam, type SqlSession } from "./sql-session.js";
import { SqliteDb, type SqlValue } from "./sqlite-db.js";
import type { ColumnValue, KeyOrderedResults, Scope, Store, StoreParts } from "./store.js";
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
async function* resultIdentifierPages(db: SqliteDb, taskRef: number): AsyncGenerator<number[]> {
  for (let after = -1; ;) {
    const [json, last] = await db.outsideUnits(() =>
      db.row(
        `SELECT json_group_array(identifier), max(identifier)
       FROM (SELECT identifier FROM results WHERE task_ref = ? AND identifier > ? ORDER BY identifier LIMIT ?)`,
        [taskRef, after, IDENTIFIER_PAGE],
      )!,
    );
    if (last === null) return;
    after = Number(last);
    yield JSON.parse(String(json)) as number[];
  }
}

/** What SQLite writes its own way. */
const SQLITE: Dialect = {
  jsonText: (column) => column,
  flag: (column) => column,
  csvField: (column) =>
    `CASE WHEN ${column} GLOB '*[",' || char(10, 13) || ']*' THEN '"' || replace(${column}, '"', '""') || '"' ELSE coalesce(${column}, '') END`,
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
    return this.db.outsideUnits(() => this.db.rows(sql, bound(params)));
  }

  row(sql: string, params: readonly SqlParam[] = []): Promise<ColumnValue[] | undefined> {
    return this.db.outsideUnits(() => this.db.row(sql, bound(params)));
  }

  run(sql: string, params: readonly SqlParam[] = []): Promise<number> {
    return this.db.outsideUnits(() => this.db.run(sql, bound(params)).changes);
  }

  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.db.unitOfWork(() => work(this));
  }

  /**
   * Ids read outside any unit of work are committed, and kept; one a unit adds may go with it
   * (PostgreSQL adds scopes outside any transaction), so inside a unit it is looked up afresh.
   */
  scopeId(scope: Scope): Promise<number> {
    return (this.db.inUnit ? new ScopeIds() : this.scopes).of(scope, this);
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

  record(taskRef: number, rows: KeyOrderedResults, at: string): Promise<void> {
    return this.db.outsideUnits(() => recordIntoSqlite(this.db, rows, { ref: taskRef, columns: rows.columns, at }));
  }

  protected resultNumbers(taskRef: number): AsyncIterable<readonly number[]> {
    return resultIdentifierPages(this.db, taskRef);
  }

  protected async *resultPages(taskRef: number): AsyncIterable<ColumnValue[][]> {
    for (let after = -1; ;) {
      // A page as one JSON array of rows, as resultIdentifierPages reads numbers: half the time of a million rows handed over one by one.
      const [json, last] = await this.db.outsideUnits(() =>
        this.db.row(
          `SELECT json_group_array(json_array(${this.resultColumns})), max(r.identifier)
             FROM (SELECT * FROM results WHERE task_ref = ? AND identifier > ? ORDER BY identifier LIMIT ?) r`,
          [taskRef, after, BATCH_ROWS],
        )!,
      );
      if (last === null) return;
      after = Number(last);
      yield JSON.parse(String(json)) as ColumnValue[][];
    }
  }

  protected async *csvPieces(taskRef: number, line: string, linesPerPiece: number): AsyncIterable<string> {
    for (let after = -1; ;) {
      const [text, last] = await this.db.outsideUnits(() =>
        this.db.row(
          `SELECT group_concat(line, char(10)), max(identifier)
             FROM (SELECT identifier, ${line} AS line FROM results WHERE task_ref = ? AND identifier > ? ORDER BY identifier LIMIT ?)`,
          [taskRef, after, linesPerPiece],
        )!,
      );
      if (last === null) return;
      after = Number(last);
      yield `${String(text)}\n`;
    }
  }

  /**
   * secure_delete zeroed the erased rows in the file (a rewrite adds nothing to that); the
   * write-ahead log holds the pages as they were until this checkpoint empties it.
   */
  protected async clearErased(): Promise<undefined> {
    await this.db.outsideUnits(() => this.db.checkpoint());
    return undefined;
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

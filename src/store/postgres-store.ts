import { createHash } from "node:crypto";
import { ERASURE_LOCK } from "./erasures.js";
import { SqlLedger } from "./ledger-store.js";
import { numberArray, PostgresDb, type TransactionClient } from "./postgres-db.js";
import type { ConnectBounds, ConnectionEnv } from "./postgres-connection.js";
import { postgresSchemaProblems } from "./postgres-check.js";
import type { StoreCheck } from "./health.js";
import { recordIntoPostgres } from "./result-recording.js";
import { SqlRunStore } from "./run-store.js";
import { numbered, ScopeIds, type Dialect, type SqlParam, type SqlSession } from "./sql-session.js";
import type { ColumnValue, KeyOrderedResults, Scope, Store, StoreParts } from "./store.js";
import { SqlTaskStore } from "./task-store.js";

/**
 * Rows read per fetch when streaming: each a few hundred kilobytes over the connection, so a
 * million rows are some hundred round trips, none per number.
 */
const BATCH_ROWS = 10_000;

/** fresh reads a task's numbers a range of this many possible numbers at a time, RANGES_PER_FETCH ranges per fetch. */
const NUMBER_RANGE = 10_000;
const RANGES_PER_FETCH = 10;

const UNIQUE_VIOLATION = "23505";

/** What PostgreSQL writes its own way. */
const POSTGRES: Dialect = {
  jsonText: (column) => `${column}::text`,
  flag: (column) => `${column}::int`,
  csvField: (column) =>
    `CASE WHEN ${column} ~ '[",\\r\\n]' THEN '"' || replace(${column}, '"', '""') || '"' ELSE coalesce(${column}, '') END`,
  numberTable: "unnest(?::bigint[]) AS n(value)",
  inNumbers: (column) => `${column} = ANY(?::bigint[])`,
  numbers: numberArray,
  instant: (iso) => (iso === "" ? "-infinity" : iso),
  noLimit: null,
  lockRow: " FOR UPDATE",
  runsAdded: "r.seq",
  isUniqueViolation: (error) => (error as { code?: unknown } | undefined)?.code === UNIQUE_VIOLATION,
  lockErasures: `SELECT pg_advisory_xact_lock(${ERASURE_LOCK})`,
};

/**
 * The pool, or one transaction's connection, as the shared parts use it: their `?`
 * placeholders numbered as PostgreSQL's `$1, $2, …`.
 */
class PostgresSession implements SqlSession {
  readonly dialect = POSTGRES;
  /** Maintenance that may not run inside a transaction (VACUUM), for after this one commits. */
  readonly afterCommit: Array<() => Promise<unknown>> = [];

  constructor(
    readonly db: PostgresDb,
    private readonly scopes: ScopeIds,
    /** The transaction this session is, if it is one. */
    private readonly client?: TransactionClient,
  ) {}

  get inTransaction(): boolean {
    return this.client !== undefined;
  }

  rows(sql: string, params: readonly SqlParam[] = []): Promise<ColumnValue[][]> {
    return this.client ? this.client.query(numbered(sql), params) : this.db.rows(numbered(sql), params);
  }

  async row(sql: string, params: readonly SqlParam[] = []): Promise<ColumnValue[] | undefined> {
    return (await this.rows(sql, params))[0];
  }

  run(sql: string, params: readonly SqlParam[] = []): Promise<number> {
    return this.client ? this.client.run(numbered(sql), params) : this.db.run(numbered(sql), params);
  }

  /**
   * Runs `work` in a transaction on a connection of its own, or, inside this session's, as a
   * savepoint of it (undone alone when `work` throws).
   */
  async transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    const { client } = this;
    if (!client) return this.db.transaction((own) => work(new PostgresSession(this.db, this.scopes, own)));
    await client.query("SAVEPOINT part");
    try {
      const value = await work(this);
      await client.query("RELEASE SAVEPOINT part");
      return value;
    } catch (error) {
      await client.query("ROLLBACK TO SAVEPOINT part");
      throw error;
    }
  }

  /** A scope's id, added outside any transaction (a scope is never rolled back). */
  scopeId(scope: Scope): Promise<number> {
    return this.scopes.of(scope, this.client ? new PostgresSession(this.db, this.scopes) : this);
  }
}

class PostgresLedger extends SqlLedger {
  constructor(
    private readonly db: PostgresDb,
    protected override readonly session: PostgresSession,
  ) {
    super(session);
  }

  record(taskRef: number, rows: KeyOrderedResults, at: string): Promise<void> {
    return recordIntoPostgres(this.db, rows, { ref: taskRef, columns: rows.columns, at });
  }

  /**
   * Each number range's numbers as one text value (at most NUMBER_RANGE of them): the cursor
   * returns some hundred values per million numbers instead of a row per number, which halved
   * the time to read them here.
   */
  protected async *resultNumbers(taskRef: number): AsyncIterable<readonly number[]> {
    const ranges = this.db.cursor(
      `SELECT string_agg(identifier::text, ',' ORDER BY identifier) FROM bulkcheck.results WHERE task_ref = $1
       GROUP BY identifier / ${NUMBER_RANGE} ORDER BY identifier / ${NUMBER_RANGE}`,
      [taskRef],
      RANGES_PER_FETCH,
    );
    for await (const rows of ranges) for (const [numbers] of rows) yield String(numbers).split(",").map(Number);
  }

  /** Through a cursor: the query is planned once, however many batches it reads (see PostgresDb.cursor). */
  protected resultPages(taskRef: number): AsyncIterable<ColumnValue[][]> {
    return this.db.cursor(
      `SELECT ${this.resultColumns} FROM bulkcheck.results r WHERE r.task_ref = $1 ORDER BY r.identifier`,
      [taskRef],
      BATCH_ROWS,
    );
  }

  /** Each piece is a range of `linesPerPiece` possible numbers: at most that many lines. */
  protected async *csvPieces(taskRef: number, line: string, linesPerPiece: number): AsyncIterable<string> {
    const pieces = this.db.cursor(
      `SELECT string_agg(${line}, E'\\n' ORDER BY identifier) FROM bulkcheck.results WHERE task_ref = $1
       GROUP BY identifier / ${linesPerPiece} ORDER BY identifier / ${linesPerPiece}`,
      [taskRef],
      RANGES_PER_FETCH,
    );
    for await (const rows of pieces) for (const [text] of rows) yield `${String(text)}\n`;
  }

  /** VACUUM, or with `rewrite` VACUUM FULL, after the transaction when in one (it may not run inside one). */
  protected async clearErased(rewrite: boolean): Promise<string | undefined> {
    const statement = rewrite ? RESULTS_REWRITE : RESULTS_VACUUM;
    if (this.session.inTransaction) {
      this.session.afterCommit.push(() => this.db.maintain(statement));
      return undefined;
    }
    const [uncleared] = await this.db.maintain(statement);
    return uncleared;
  }

  protected async bytes(): Promise<number> {
    const row = await this.db.row(
      "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c WHERE c.relnamespace = 'bulkcheck'::regnamespace AND c.relkind = 'r'",
    );
    return Number(row![0]);
  }
}

/**
 * The shared store: runs, tasks and the ledger in a team's PostgreSQL, with the embedded
 * store's semantics for every machine at once. One open run per command and scope is a
 * partial unique index, so two machines creating it make one; a lease is taken under a row
 * lock; results are recorded a batch per statement and read through cursors; lookups are
 * one statement per batch of numbers.
 */
export class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly runs: SqlRunStore;
  readonly tasks: SqlTaskStore;
  readonly ledger: PostgresLedger;
  readonly #db: PostgresDb;
  readonly #scopes = new ScopeIds();

  private constructor(db: PostgresDb) {
    this.#db = db;
    const parts = this.#parts(new PostgresSession(db, this.#scopes));
    this.runs = parts.runs;
    this.tasks = parts.tasks;
    this.ledger = parts.ledger;
  }

  /** Connects to the store at `url` and brings its schema up to date (see PostgresDb.open). */
  static async open(url: string, env: ConnectionEnv, bounds?: ConnectBounds): Promise<PostgresStore> {
    return new PostgresStore(await PostgresDb.open(url, env, bounds));
  }

  /** The URL without its password. */
  get location(): string {
    return this.#db.location;
  }

  get schemaVersion(): number {
    return this.#db.schemaVersion;
  }

  /** `store check`: the schema version (opening refused a newer one), and every table and column (see postgresSchemaProblems). */
  async check(): Promise<StoreCheck> {
    return {
      kind: this.kind,
      location: this.location,
      schemaVersion: this.schemaVersion,
      problems: await postgresSchemaProblems(this.#db),
    };
  }

  /** The parts on a transaction's connection of their own (reads through cursors see what is committed). */
  transaction<T>(work: (parts: StoreParts) => Promise<T>): Promise<T> {
    return this.#transaction(() => Promise.resolve(), work);
  }

  /**
   * Claims of one product in one scope take turns on an advisory lock held until the
   * transaction ends (committed, rolled back, or its connection lost): claims of other
   * products and scopes, and every other writer, go on meanwhile.
   */
  claim<T>(scope: Scope, product: string, work: (parts: StoreParts) => Promise<T>): Promise<T> {
    return this.#transaction((client) => client.query("SELECT pg_advisory_xact_lock($1, $2)", claimLockKeys(scope, product)), work);
  }

  async #transaction<T>(first: (client: TransactionClient) => Promise<unknown>, work: (parts: StoreParts) => Promise<T>): Promise<T> {
    let session: PostgresSession | undefined;
    const value = await this.#db.transaction(async (client) => {
      await first(client);
      return work(this.#parts((session = new PostgresSession(this.#db, this.#scopes, client))));
    });
    for (const task of session!.afterCommit) await task();
    return value;
  }

  close(): Promise<void> {
    return this.#db.close();
  }

  #parts(session: PostgresSession) {
    return {
      runs: new SqlRunStore(session),
      tasks: new SqlTaskStore(session),
      ledger: new PostgresLedger(this.#db, session),
    };
  }
}

/**
 * The advisory lock of the claims of a product in a scope, as the two 32-bit keys
 * pg_advisory_xact_lock takes: the first names bulkcheck's claims (other applications on the
 * server use their own), the second the product and scope.
 */
function claimLockKeys(scope: Scope, product: string): [number, number] {
  const digest = createHash("sha256").update(`${scope.baseUrl}\n${scope.profile}\n${product}`).digest();
  return [CLAIM_LOCK_CLASS, digest.readInt32BE(0)];
}

/** The first key of every claim lock: "bclm" read as a 32-bit integer. */
const CLAIM_LOCK_CLASS = 0x62636c6d;

/**
 * Clears pruned results out of the tables and their indexes now rather than when autovacuum
 * comes by, locking out no reader or writer: VACUUM marks their space free, to be written over
 * by later rows, but does not clear it, so their bytes may stay in the files until then (a
 * row's in the heap page where it sat, unless later rows of its page moved over it; its keys
 * in the indexes' pages). ANALYZE computes the planner's statistics of the tables (which list
 * some of their values, erased numbers among them) again from what is left.
 */
const RESULTS_VACUUM = "VACUUM (ANALYZE) bulkcheck.results, bulkcheck.task_number_chunks";

/**
 * What `ledger forget` does once it has deleted something: VACUUM FULL writes each table and
 * its indexes anew, from their live rows only, into new files, and removes the old ones (an
 * erased number's 8 bytes stayed in the results heap and 4 index files after a VACUUM). It
 * holds the tables under an exclusive lock meanwhile: other machines' commands using the store
 * wait for it (about 11 s per million results and as many tasks' numbers, measured by
 * `node bench/forget-bench.js`; see docs/performance.md), and it needs room for a copy of the
 * tables. What stays: the server's write-ahead log until it is recycled, the catalog's earlier
 * statistics rows until the server vacuums its catalog, the old files' blocks on the disk until
 * the file system reuses them, replicas and backups (see docs/files-and-security.md). A user
 * who does not own the tables (nor has MAINTAIN on them) may not VACUUM them: the server skips
 * them with a warning, which is passed on.
 */
const RESULTS_REWRITE = "VACUUM (FULL, ANALYZE) bulkcheck.results, bulkcheck.task_number_chunks";

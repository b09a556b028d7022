import { statSync } from "node:fs";
import { SqliteDb, type SqlValue } from "./sqlite-db.js";
import { RESULT_VALUE_COLUMNS } from "./sqlite-schema.js";
import type {
  Erasure,
  ErasureOptions,
  FreshResult,
  Lease,
  LedgerFilter,
  LedgerRow,
  LedgerStats,
  NewRun,
  NewTask,
  ResultRow,
  RunFilter,
  RunPatch,
  RunRecord,
  Scope,
  Store,
  TaskPatch,
  TaskRecord,
  UnfinishedTasks,
} from "./store.js";
import { identifierNumber, splitValues } from "./result-values.js";
import {
  ledgerRowOf,
  leaseOf,
  RUN_INSERT_COLUMNS,
  runOf,
  runPatchColumns,
  runValues,
  sameLease,
  statsGroupOf,
  TASK_INSERT_COLUMNS,
  taskContextOf,
  taskOf,
  columnsOfAnotherTask,
  taskPatchColumns,
  taskValues,
  type TaskContext,
} from "./store-rows.js";

/** Rows written per transaction when recording, and read per query when streaming. */
const BATCH_ROWS = 5000;
/** Identifiers read per query, as one JSON array (see #identifierPages). */
const IDENTIFIER_PAGE = 50_000;
/** A task's numbers written per statement (as one JSON array). */
const NUMBERS_PER_STATEMENT = 50_000;

const RUN_COLUMNS =
  "r.id, s.base_url, s.profile, r.identity, r.kind, r.state, r.started_at, r.finished_at, r.product, r.country, r.source, r.settings, r.prepared, r.plan, r.output, r.host, r.os_user, r.lease_host, r.lease_pid, r.lease_nonce, r.heartbeat_at, r.note";

const TASK_COLUMNS =
  "t.ref, s.base_url, s.profile, t.run_id, t.part, t.parts, t.idempotency_key, t.task_id, t.product, t.country, t.count, t.sha256, t.submitted_at, t.created_at, t.status, t.total, t.success_cnt, t.failure_cnt, t.checked_at, t.retry_of, t.replayed, t.recorded_at, t.staged_file, t.staged_bytes, t.staged_sha256";

const VALUE_COLUMNS = RESULT_VALUE_COLUMNS.map((column) => `r.${column}`).join(", ");

/** The embedded store: one SQLite file in the state directory (see SqliteDb). */
export class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly #db: SqliteDb;
  readonly #scopes = new Map<string, number>();

  private constructor(db: SqliteDb) {
    this.#db = db;
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

  /** A value of the store's own bookkeeping (e.g. that a journal was imported), or undefined. */
  meta(key: string): string | undefined {
    const row = this.#db.row("SELECT value FROM meta WHERE key = ?", [key]);
    return row ? String(row[0]) : undefined;
  }

  setMeta(key: string, value: string): void {
    this.#db.run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [key, value]);
  }

  /** Runs `work` in one write transaction (see SqliteDb.transaction). */
  transaction<T>(work: () => T): T {
    return this.#db.transaction(work);
  }

  #scopeId(scope: Scope): number {
    const key = `${scope.baseUrl}\n${scope.profile}`;
    let id = this.#scopes.get(key);
    if (id === undefined) {
      this.#db.run("INSERT INTO scopes (base_url, profile) VALUES (?, ?) ON CONFLICT DO NOTHING", [scope.baseUrl, scope.profile]);
      id = Number(this.#db.row("SELECT id FROM scopes WHERE base_url = ? AND profile = ?", [scope.baseUrl, scope.profile])![0]);
      this.#scopes.set(key, id);
    }
    return id;
  }

  // Runs

  openRun(scope: Scope, identity: string): Promise<RunRecord | undefined> {
    const row = this.#db.row(
      `SELECT ${RUN_COLUMNS} FROM runs r JOIN scopes s ON s.id = r.scope_id WHERE r.scope_id = ? AND r.identity = ? AND r.state = 'open'`,
      [this.#scopeId(scope), identity],
    );
    return Promise.resolve(row && runOf(row));
  }

  createRun(run: NewRun, lease: Lease): Promise<RunRecord | "exists"> {
    const heartbeatAt = run.startedAt;
    try {
      this.#db.run(
        `INSERT INTO runs (${RUN_INSERT_COLUMNS.join(", ")}) VALUES (${RUN_INSERT_COLUMNS.map(() => "?").join(", ")})`,
        runValues(run, this.#scopeId(run.scope), { ...lease, heartbeatAt: run.startedAt }),
      );
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") return Promise.resolve("exists");
      throw error;
    }
    return Promise.resolve({ ...run, lease: { ...lease, heartbeatAt } });
  }

  claimRun(runId: string, lease: Lease, now: string, staleBefore: string, isAlive: (holder: Lease) => boolean): Promise<Lease | undefined> {
    return Promise.resolve(
      this.#db.transaction(() => {
        const row = this.#db.row("SELECT lease_host, lease_pid, lease_nonce, heartbeat_at FROM runs WHERE id = ?", [runId]);
        if (!row) throw new Error(`run ${runId} is not in the store`);
        const holder = leaseOf(row[0], row[1], row[2]);
        const heartbeat = row[3] as string | null;
        if (holder && !sameLease(holder, lease) && heartbeat !== null && heartbeat >= staleBefore && isAlive(holder)) return holder;
        this.#db.run("UPDATE runs SET lease_host = ?, lease_pid = ?, lease_nonce = ?, heartbeat_at = ? WHERE id = ?", [
          lease.host,
          lease.pid,
          lease.nonce,
          now,
          runId,
        ]);
        return undefined;
      }),
    );
  }

  heartbeat(runId: string, lease: Lease, now: string): Promise<void> {
    this.#db.run("UPDATE runs SET heartbeat_at = ? WHERE id = ? AND lease_host = ? AND lease_pid = ? AND lease_nonce = ?", [
      now,
      runId,
      lease.host,
      lease.pid,
      lease.nonce,
    ]);
    return Promise.resolve();
  }

  releaseRun(runId: string, lease: Lease): Promise<void> {
    this.#db.run(
      "UPDATE runs SET lease_host = NULL, lease_pid = NULL, lease_nonce = NULL, heartbeat_at = NULL WHERE id = ? AND lease_host = ? AND lease_pid = ? AND lease_nonce = ?",
      [runId, lease.host, lease.pid, lease.nonce],
    );
    return Promise.resolve();
  }

  updateRun(runId: string, patch: RunPatch): Promise<void> {
    const given = runPatchColumns(patch).filter(([, value]) => value !== undefined);
    const sets = given.map(([column]) => `${column} = ?`);
    const values = given.map(([, value]) => value!);
    if (sets.length > 0) this.#db.run(`UPDATE runs SET ${sets.join(", ")} WHERE id = ?`, [...values, runId]);
    return Promise.resolve();
  }

  run(idOrPrefix: string): Promise<RunRecord | undefined> {
    const rows = this.#db.rows(
      `SELECT ${RUN_COLUMNS} FROM runs r JOIN scopes s ON s.id = r.scope_id WHERE r.id = ? OR r.id LIKE ? ESCAPE '\\' ORDER BY r.id = ? DESC LIMIT 2`,
      [idOrPrefix, `${idOrPrefix.replace(/[\\%_]/g, "\\$&")}%`, idOrPrefix],
    );
    const exact = rows.find((row) => row[0] === idOrPrefix);
    return Promise.resolve(exact ? runOf(exact) : rows.length === 1 ? runOf(rows[0]!) : undefined);
  }

  runs(filter: RunFilter): Promise<RunRecord[]> {
    const clauses: string[] = [];
    const params: SqlValue[] = [];
    if (filter.scope) {
      clauses.push("r.scope_id = ?");
      params.push(this.#scopeId(filter.scope));
    }
    if (filter.state) {
      clauses.push("r.state = ?");
      params.push(filter.state);
    }
    if (filter.since) {
      clauses.push("r.started_at >= ?");
      params.push(filter.since);
    }
    const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    const rows = this.#db.rows(
      `SELECT ${RUN_COLUMNS} FROM runs r JOIN scopes s ON s.id = r.scope_id ${where} ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?`,
      [...params, filter.limit ?? -1],
    );
    return Promise.resolve(rows.map(runOf));
  }

  copyRun(run: RunRecord): Promise<boolean> {
    const { changes } = this.#db.run(
      `INSERT INTO runs (${RUN_INSERT_COLUMNS.join(", ")}) VALUES (${RUN_INSERT_COLUMNS.map(() => "?").join(", ")}) ON CONFLICT (id) DO NOTHING`,
      runValues(run, this.#scopeId(run.scope), run.lease),
    );
    return Promise.resolve(changes > 0);
  }

  // Tasks

  addTask(task: NewTask): Promise<TaskRecord> {
    const { lastInsertRowid } = this.#db.run(
      `INSERT INTO tasks (${TASK_INSERT_COLUMNS.join(", ")}) VALUES (${TASK_INSERT_COLUMNS.map(() => "?").join(", ")})`,
      taskValues(task, this.#scopeId(task.scope)),
    );
    return Promise.resolve({ ...task, ref: lastInsertRowid });
  }

  updateTask(ref: number, patch: TaskPatch): Promise<void> {
    const given = taskPatchColumns(patch).filter(([, value]) => value !== undefined);
    const sets = given.map(([column]) => `${column} = ?`);
    const values = given.map(([, value]) => value!);
    if (patch.taskId !== undefined) {
      // A task id ends the upload that got it; another task than the part had (uploaded again, the
      // service having forgotten the first) has neither its staged result nor its date.
      sets.push("upload_started_at = NULL");
      for (const column of columnsOfAnotherTask(patch)) {
        sets.push(`${column} = CASE WHEN task_id IS ? THEN ${column} END`);
        values.push(patch.taskId);
      }
    }
    // The first check that saw the task succeed dates its results; later checks never move it.
    if (patch.checkedAt !== undefined) {
      sets.push("checked_at = COALESCE(checked_at, ?)");
      values.push(patch.checkedAt);
    }
    if (sets.length > 0) this.#db.run(`UPDATE tasks SET ${sets.join(", ")} WHERE ref = ?`, [...values, ref]);
    return Promise.resolve();
  }

  tasksOfRun(runId: string): Promise<TaskRecord[]> {
    return Promise.resolve(
      this.#db
        .rows(`SELECT ${TASK_COLUMNS} FROM tasks t JOIN scopes s ON s.id = t.scope_id WHERE t.run_id = ? ORDER BY t.part, t.ref`, [runId])
        .map(taskOf),
    );
  }

  taskById(scope: Scope, taskId: string): Promise<TaskRecord | undefined> {
    const row = this.#db.row(
      `SELECT ${TASK_COLUMNS} FROM tasks t JOIN scopes s ON s.id = t.scope_id WHERE t.scope_id = ? AND t.task_id = ? ORDER BY t.ref DESC LIMIT 1`,
      [this.#scopeId(scope), taskId],
    );
    return Promise.resolve(row && taskOf(row));
  }

  taskWithKey(scope: Scope, key: string): Promise<TaskRecord | undefined> {
    const row = this.#db.row(
      `SELECT ${TASK_COLUMNS} FROM tasks t JOIN scopes s ON s.id = t.scope_id WHERE t.scope_id = ? AND t.idempotency_key = ?`,
      [this.#scopeId(scope), key],
    );
    return Promise.resolve(row && taskOf(row));
  }

  recentTasks(scope: Scope, limit: number): Promise<TaskRecord[]> {
    return Promise.resolve(
      this.#db
        .rows(
          `SELECT ${TASK_COLUMNS} FROM tasks t JOIN scopes s ON s.id = t.scope_id WHERE t.scope_id = ? AND t.task_id IS NOT NULL ORDER BY t.ref DESC LIMIT ?`,
          [this.#scopeId(scope), Number.isFinite(limit) ? limit : -1],
        )
        .map(taskOf),
    );
  }

  tasksAfter(afterRef: number, limit: number): Promise<TaskRecord[]> {
    return Promise.resolve(
      this.#db
        .rows(`SELECT ${TASK_COLUMNS} FROM tasks t JOIN scopes s ON s.id = t.scope_id WHERE t.ref > ? ORDER BY t.ref LIMIT ?`, [
          afterRef,
          limit,
        ])
        .map(taskOf),
    );
  }

  markUploading(ref: number, at: string | undefined): Promise<void> {
    this.#db.run("UPDATE tasks SET upload_started_at = ? WHERE ref = ?", [at ?? null, ref]);
    return Promise.resolve();
  }

  activity(scope: Scope, since: string): Promise<{ uploading: number; unfinished: number }> {
    const [uploading, unfinished] = this.#db.row(
      `SELECT count(*) FILTER (WHERE task_id IS NULL AND upload_started_at >= ?),
              count(*) FILTER (WHERE task_id IS NOT NULL AND (status IS NULL OR status = 'processing'))
       FROM tasks WHERE scope_id = ?`,
      [since, this.#scopeId(scope)],
    )!;
    return Promise.resolve({ uploading: Number(uploading), unfinished: Number(unfinished) });
  }

  unfinishedTasks(scope: Scope): Promise<UnfinishedTasks[]> {
    const rows = this.#db.rows(
      `SELECT product, count(*), sum(coalesce(count, total, 0)) FROM tasks
       WHERE scope_id = ? AND task_id IS NOT NULL AND (status IS NULL OR status = 'processing')
       GROUP BY product ORDER BY product`,
      [this.#scopeId(scope)],
    );
    return Promise.resolve(
      rows.map(([product, tasks, numbers]) => ({ product: String(product), tasks: Number(tasks), numbers: Number(numbers) })),
    );
  }

  addTaskNumbers(taskRef: number, identifiers: readonly number[]): Promise<void> {
    const sorted = Float64Array.from(identifiers).sort();
    this.#db.transaction(() => {
      for (let at = 0; at < sorted.length; at += NUMBERS_PER_STATEMENT) {
        this.#db.run("INSERT OR IGNORE INTO task_numbers (task_ref, identifier) SELECT ?, value FROM json_each(?)", [
          taskRef,
          JSON.stringify(Array.from(sorted.subarray(at, at + NUMBERS_PER_STATEMENT))),
        ]);
      }
    });
    return Promise.resolve();
  }

  answeringTasks(scope: Scope, product: string, maxTaskRef: number): Promise<TaskRecord[]> {
    return Promise.resolve(
      this.#db
        .rows(
          `SELECT ${TASK_COLUMNS} FROM tasks t JOIN scopes s ON s.id = t.scope_id
           WHERE t.scope_id = ? AND t.product = ? AND t.ref <= ? AND (t.task_id IS NOT NULL OR t.recorded_at IS NOT NULL)`,
          [this.#scopeId(scope), product, maxTaskRef],
        )
        .map(taskOf),
    );
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store interface is asynchronous (PostgreSQL); SQLite reads in batches synchronously
  async *taskNumbers(taskRef: number): AsyncIterable<readonly number[]> {
    yield* this.#identifierPages("task_numbers", taskRef);
  }

  /**
   * A task's identifiers in `table`, a page at a time in number order (within a page, as the
   * ordered subquery feeds them: callers use them as sets), each page read as one JSON array:
   * libsql hands rows over one by one, and a million numbers took 3–5× as long as rows as they
   * do as pages (planning reads millions: the ledger's results and its tasks' numbers). An
   * ORDER BY inside the aggregate would sort every page again: twice the time.
   */
  *#identifierPages(table: "results" | "task_numbers", taskRef: number): Generator<number[]> {
    for (let after = -1; ;) {
      const [json, last] = this.#db.row(
        `SELECT json_group_array(identifier), max(identifier)
         FROM (SELECT identifier FROM ${table} WHERE task_ref = ? AND identifier > ? ORDER BY identifier LIMIT ?)`,
        [taskRef, after, IDENTIFIER_PAGE],
      )!;
      if (last === null) return;
      after = Number(last);
      yield JSON.parse(String(json)) as number[];
    }
  }

  // Ledger

  /**
   * A result's rows wait in a TEMP table of this connection (appended in the order they
   * come, so no lock on the file and no index) until markRecorded moves them into the
   * ledger sorted by number. Inserted in a list's own order, every batch would land all
   * over both B-trees of `results` (the key and the identifier index): a million rows of a
   * shuffled list took 76 s to record against 7 s for the same numbers in order.
   */
  addResults(taskRef: number, columns: readonly string[], rows: readonly ResultRow[]): Promise<void> {
    const split = splitValues(columns);
    const values: SqlValue[] = [];
    for (const row of rows) {
      const identifier = identifierNumber(row.identifier);
      if (identifier !== undefined) values.push(taskRef, identifier, ...split(row.values));
    }
    const count = values.length / ROW_VALUES;
    this.#createIncoming();
    // Full statements of a thousand rows each (far fewer calls into SQLite), then the rest one row at a time.
    this.#db.temporaryTransaction(() => {
      const full = Math.floor(count / RECORD_ROWS_PER_STATEMENT) * RECORD_ROWS_PER_STATEMENT;
      for (let row = 0; row < full; row += RECORD_ROWS_PER_STATEMENT) {
        this.#db.run(INSERT_MANY_INCOMING, values.slice(row * ROW_VALUES, (row + RECORD_ROWS_PER_STATEMENT) * ROW_VALUES));
      }
      for (let row = full; row < count; row++) this.#db.run(INSERT_ONE_INCOMING, values.slice(row * ROW_VALUES, (row + 1) * ROW_VALUES));
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
    this.#db.temporaryTransaction(() => {
      this.#db.run("DELETE FROM temp.ordered_results");
      this.#db.run(`INSERT INTO temp.ordered_results SELECT * FROM temp.incoming_results WHERE task_ref = ? ORDER BY identifier, rowid`, [
        taskRef,
      ]);
      this.#db.run("DELETE FROM temp.incoming_results WHERE task_ref = ?", [taskRef]);
    });
    const last = Number(this.#db.row("SELECT coalesce(max(rowid), 0) FROM temp.ordered_results")![0]);
    for (let after = 0; after < last; after += MOVE_ROWS_PER_TRANSACTION) {
      this.#db.transaction(() => this.#db.run(MOVE_ORDERED_SLICE, [after, after + MOVE_ROWS_PER_TRANSACTION]));
    }
    this.#db.temporaryTransaction(() => this.#db.run("DELETE FROM temp.ordered_results"));
    this.#db.run("UPDATE tasks SET recorded_at = ?, columns = ? WHERE ref = ?", [at, JSON.stringify(columns), taskRef]);
    return Promise.resolve();
  }

  /** The connection's TEMP tables where results wait for markRecorded (`ordered_results` is emptied before it is filled, so its rowids run 1, 2, … in number order). */
  #createIncoming(): void {
    this.#db.exec(`CREATE TEMP TABLE IF NOT EXISTS incoming_results (${RESULT_COLUMNS_DECLARED});
      CREATE TEMP TABLE IF NOT EXISTS ordered_results (${RESULT_COLUMNS_DECLARED})`);
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store interface is asynchronous (PostgreSQL); SQLite reads in batches synchronously
  async *freshResults(scope: Scope, product: string, since: string, maxTaskRef?: number): AsyncIterable<readonly FreshResult[]> {
    const tasks = this.#db.rows(
      `SELECT ref FROM tasks WHERE scope_id = ? AND product = ? AND checked_at >= ? AND recorded_at IS NOT NULL AND ref <= ?
       ORDER BY checked_at DESC, ref DESC`,
      [this.#scopeId(scope), product, since, maxTaskRef ?? Number.MAX_SAFE_INTEGER],
    );
    for (const [ref] of tasks) {
      const taskRef = Number(ref);
      for (const identifiers of this.#identifierPages("results", taskRef)) yield identifiers.map((identifier) => ({ identifier, taskRef }));
    }
  }

  checkedAtOf(taskRefs: readonly number[]): Promise<Map<number, string>> {
    const found = new Map<number, string>();
    for (let at = 0; at < taskRefs.length; at += BATCH_ROWS) {
      const rows = this.#db.rows(
        "SELECT ref, checked_at FROM tasks WHERE ref IN (SELECT value FROM json_each(?)) AND checked_at IS NOT NULL",
        [JSON.stringify(taskRefs.slice(at, at + BATCH_ROWS))],
      );
      for (const [ref, checkedAt] of rows) found.set(Number(ref), String(checkedAt));
    }
    return Promise.resolve(found);
  }

  maxTaskRef(): Promise<number> {
    return Promise.resolve(Number(this.#db.row("SELECT COALESCE(max(ref), 0) FROM tasks")![0]));
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store interface is asynchronous (PostgreSQL); SQLite reads in batches synchronously
  async *taskResults(taskRef: number, identifiers?: ReadonlySet<number>): AsyncIterable<readonly LedgerRow[]> {
    const task = this.#taskContext(taskRef);
    if (!task) return;
    for (let after = -1; ;) {
      // A page as one JSON array of rows, as #identifierPages reads numbers: half the time of a million rows handed over one by one.
      const [json, last] = this.#db.row(
        `SELECT json_group_array(json_array(r.identifier, ${VALUE_COLUMNS}, r.extra)), max(r.identifier)
         FROM (SELECT * FROM results WHERE task_ref = ? AND identifier > ? ORDER BY identifier LIMIT ?) r`,
        [taskRef, after, BATCH_ROWS],
      )!;
      if (last === null) return;
      after = Number(last);
      const rows = JSON.parse(String(json)) as SqlValue[][];
      const kept = identifiers ? rows.filter((row) => identifiers.has(Number(row[0]))) : rows;
      if (kept.length > 0) yield kept.map((row) => ledgerRowOf(row, 0, task));
    }
  }

  lookup(identifiers: readonly string[], filter: LedgerFilter = {}): Promise<LedgerRow[]> {
    const numbers = identifiers.map(identifierNumber).filter((n) => n !== undefined);
    const rows: LedgerRow[] = [];
    for (let at = 0; at < numbers.length; at += BATCH_ROWS) {
      const { where, params } = this.#filterClause(filter);
      const found = this.#db.rows(
        `SELECT r.identifier, ${VALUE_COLUMNS}, r.extra, ${TASK_CONTEXT} FROM results r JOIN tasks t ON t.ref = r.task_ref JOIN scopes s ON s.id = t.scope_id
         WHERE r.identifier IN (SELECT value FROM json_each(?)) AND t.recorded_at IS NOT NULL ${where} ORDER BY t.checked_at DESC, t.ref DESC`,
        [JSON.stringify(numbers.slice(at, at + BATCH_ROWS)), ...params],
      );
      for (const row of found) rows.push(ledgerRowOf(row, 0, taskContextOf(row, RESULT_VALUE_COLUMNS.length + 2)));
    }
    return Promise.resolve(rows);
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store interface is asynchronous (PostgreSQL); SQLite reads in batches synchronously
  async *previousResults(taskRef: number): AsyncIterable<ReadonlyArray<{ current: LedgerRow; previous: LedgerRow }>> {
    const task = this.#taskContext(taskRef);
    const position = this.#db.row("SELECT scope_id, product, checked_at FROM tasks WHERE ref = ?", [taskRef]);
    if (!task || !position || position[2] === null) return;
    const [scopeId, product, checkedAt] = position;
    for (let after = -1; ;) {
      const current = this.#db.rows(
        `SELECT r.identifier, ${VALUE_COLUMNS}, r.extra FROM results r WHERE r.task_ref = ? AND r.identifier > ? ORDER BY r.identifier LIMIT ?`,
        [taskRef, after, BATCH_ROWS],
      );
      if (current.length === 0) return;
      after = Number(current.at(-1)![0]);
      const earlier = this.#db.rows(
        `SELECT r.identifier, ${VALUE_COLUMNS}, r.extra, ${TASK_CONTEXT} FROM results r JOIN tasks t ON t.ref = r.task_ref JOIN scopes s ON s.id = t.scope_id
         WHERE r.identifier IN (SELECT value FROM json_each(?)) AND t.scope_id = ? AND t.product = ? AND (t.checked_at, t.ref) < (?, ?)
           AND t.recorded_at IS NOT NULL
         ORDER BY r.identifier, t.checked_at DESC, t.ref DESC`,
        [JSON.stringify(current.map((row) => row[0])), scopeId!, product!, checkedAt!, taskRef],
      );
      const latest = new Map<number, LedgerRow>();
      for (const row of earlier) {
        const identifier = Number(row[0]);
        if (!latest.has(identifier)) latest.set(identifier, ledgerRowOf(row, 0, taskContextOf(row, RESULT_VALUE_COLUMNS.length + 2)));
      }
      const pairs = current.flatMap((row) => {
        const previous = latest.get(Number(row[0]));
        return previous ? [{ current: ledgerRowOf(row, 0, task), previous }] : [];
      });
      if (pairs.length > 0) yield pairs;
    }
  }

  forget(identifiers: readonly string[], options: ErasureOptions & { product?: string } = {}): Promise<Erasure> {
    const numbers = identifiers.map(identifierNumber).filter((n) => n !== undefined);
    const ofProduct = options.product === undefined ? "" : " AND task_ref IN (SELECT ref FROM tasks WHERE product = ?)";
    const batches = inBatches(numbers).map((batch) => [batch, ...(options.product === undefined ? [] : [options.product])]);
    // Checkpointed even when nothing is found: an erasure cut short before its checkpoint is completed by the next.
    return Promise.resolve(this.#erase(`identifier IN (SELECT value FROM json_each(?))${ofProduct}`, batches, options, true));
  }

  prune(before: string, options: ErasureOptions = {}): Promise<Erasure> {
    return Promise.resolve(this.#erase("task_ref IN (SELECT ref FROM tasks WHERE checked_at < ?)", [[before]], options, false));
  }

  forgetTasks(taskRefs: readonly number[]): Promise<Erasure> {
    return Promise.resolve(
      this.#erase(
        "task_ref IN (SELECT value FROM json_each(?))",
        inBatches(taskRefs).map((batch) => [batch]),
        {},
        false,
      ),
    );
  }

  /**
   * Deletes (or, with dryRun, counts) the results `where` selects, and the tasks' numbers it
   * selects, a transaction per set of parameters. secure_delete zeroes the deleted rows in the file; the write-ahead log still
   * holds the pages as they were until the checkpoint that empties it.
   */
  #erase(where: string, batches: readonly SqlValue[][], options: ErasureOptions, alwaysCheckpoint: boolean): Erasure {
    let results = 0;
    for (const params of batches) {
      results += options.dryRun
        ? Number(this.#db.row(`SELECT count(*) FROM results WHERE ${where}`, params)![0])
        : this.#db.transaction(() => {
            // A task's numbers hold the digits too (those in flight, and those without a result).
            this.#db.run(`DELETE FROM task_numbers WHERE ${where}`, params);
            return this.#db.run(`DELETE FROM results WHERE ${where}`, params).changes;
          });
    }
    if (!options.dryRun && (results > 0 || alwaysCheckpoint)) this.#db.checkpoint();
    return { results };
  }

  stats(): Promise<LedgerStats> {
    const [results, numbers, tasks, oldest, newest] = this.#db.row(
      `WITH recorded AS (SELECT r.identifier, t.checked_at, t.ref FROM results r JOIN tasks t ON t.ref = r.task_ref WHERE t.recorded_at IS NOT NULL)
       SELECT count(*), count(DISTINCT identifier), count(DISTINCT ref), min(checked_at), max(checked_at) FROM recorded`,
    )!;
    const groups = this.#db
      .rows(
        `SELECT s.base_url, s.profile, t.product, count(*), count(DISTINCT r.identifier), min(t.checked_at), max(t.checked_at)
         FROM results r JOIN tasks t ON t.ref = r.task_ref JOIN scopes s ON s.id = t.scope_id
         WHERE t.recorded_at IS NOT NULL
         GROUP BY s.base_url, s.profile, t.product ORDER BY s.base_url, s.profile, t.product`,
      )
      .map(statsGroupOf);
    const bytes = ["", "-wal"].reduce((sum, suffix) => sum + (statSync(this.#db.path + suffix, { throwIfNoEntry: false })?.size ?? 0), 0);
    return Promise.resolve({
      results: Number(results),
      numbers: Number(numbers),
      tasks: Number(tasks),
      ...(oldest === null ? {} : { oldest: String(oldest) }),
      ...(newest === null ? {} : { newest: String(newest) }),
      groups,
      bytes,
    });
  }

  async *exportResults(filter: LedgerFilter): AsyncIterable<readonly LedgerRow[]> {
    const { where, params } = this.#filterClause(filter);
    const tasks = this.#db.rows(`SELECT t.ref FROM tasks t WHERE t.recorded_at IS NOT NULL ${where} ORDER BY t.checked_at, t.ref`, params);
    for (const [ref] of tasks) yield* this.taskResults(Number(ref));
  }

  close(): Promise<void> {
    this.#db.close();
    return Promise.resolve();
  }

  /** A WHERE fragment (starting with AND) for a ledger filter over `t` (tasks) and `s` (scopes). */
  #filterClause(filter: LedgerFilter): { where: string; params: SqlValue[] } {
    const clauses: string[] = [];
    const params: SqlValue[] = [];
    if (filter.scope) {
      clauses.push("t.scope_id = ?");
      params.push(this.#scopeId(filter.scope));
    }
    if (filter.product) {
      clauses.push("t.product = ?");
      params.push(filter.product);
    }
    if (filter.since) {
      clauses.push("t.checked_at >= ?");
      params.push(filter.since);
    }
    return { where: clauses.map((clause) => `AND ${clause}`).join(" "), params };
  }

  #taskContext(taskRef: number): TaskContext | undefined {
    const row = this.#db.row(
      `SELECT ${TASK_CONTEXT} FROM tasks t JOIN scopes s ON s.id = t.scope_id WHERE t.ref = ? AND t.checked_at IS NOT NULL`,
      [taskRef],
    );
    return row && taskContextOf(row, 0);
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

/** Numbers or references as JSON arrays of BATCH_ROWS each, a parameter for `json_each`. */
function inBatches(values: readonly number[]): string[] {
  const batches: string[] = [];
  for (let at = 0; at < values.length; at += BATCH_ROWS) batches.push(JSON.stringify(values.slice(at, at + BATCH_ROWS)));
  return batches;
}

const TASK_CONTEXT = "s.base_url, s.profile, t.product, t.task_id, t.checked_at, t.columns";

import { Assignments, copyText, numberArray, placeholders, PostgresDb, type PgParam, type TransactionClient } from "./postgres-db.js";
import type { ConnectBounds, ConnectionEnv } from "./postgres-connection.js";
import { postgresSchemaProblems } from "./postgres-check.js";
import type { StoreCheck } from "./health.js";
import { identifierNumber, splitValues } from "./result-values.js";
import { RESULT_VALUE_COLUMNS } from "./sqlite-schema.js";
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
  taskPatchColumns,
  columnsOfAnotherTask,
  taskValues,
  type TaskContext,
} from "./store-rows.js";
import type {
  ColumnValue,
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

/**
 * Rows encoded at once when recording, read per fetch when streaming, and numbers per
 * statement in lookups: each a few hundred kilobytes over the connection, so a million rows
 * are some hundred round trips, none per number.
 */
const BATCH_ROWS = 10_000;
/** A task's numbers written per statement (as one array). */
const NUMBERS_PER_STATEMENT = 50_000;

/** freshResults reads a task's numbers a range of this many possible numbers at a time, RANGES_PER_FETCH ranges per fetch. */
const NUMBER_RANGE = 10_000;
const RANGES_PER_FETCH = 10;

// The columns of each record, in the order store-rows.ts reads them.
const RUN_COLUMNS =
  "r.id, s.base_url, s.profile, r.identity, r.kind, r.state, r.started_at, r.finished_at, r.product, r.country, r.source::text, r.settings::text, r.prepared::text, r.plan::text, r.output::text, r.host, r.os_user, r.lease_host, r.lease_pid, r.lease_nonce, r.heartbeat_at, r.note";
const RUNS = "bulkcheck.runs r JOIN bulkcheck.scopes s ON s.id = r.scope_id";
const TASK_COLUMNS =
  "t.ref, s.base_url, s.profile, t.run_id, t.part, t.parts, t.idempotency_key, t.task_id, t.product, t.country, t.count, t.sha256, t.submitted_at, t.created_at, t.status, t.total, t.success_cnt, t.failure_cnt, t.checked_at, t.retry_of, t.replayed::int, t.recorded_at, t.staged_file, t.staged_bytes, t.staged_sha256";
const TASKS = "bulkcheck.tasks t JOIN bulkcheck.scopes s ON s.id = t.scope_id";
const TASK_CONTEXT = "s.base_url, s.profile, t.product, t.task_id, t.checked_at, t.columns::text";
const RESULT_COLUMNS = `r.identifier, ${RESULT_VALUE_COLUMNS.map((column) => `r.${column}`).join(", ")}, r.extra::text`;

/**
 * Results are written with COPY, about twice as fast as an INSERT of the same rows unnested
 * from arrays (200,000 carrier rows: 1.6–2.0 s against 3.2–4.0 s here). COPY stops at a row
 * already there, which happens only when a recording cut short is done again: then the
 * batch goes through a temporary table, and only the rows not there yet are added.
 */
const RESULT_COLUMNS_LIST = `task_ref, identifier, ${RESULT_VALUE_COLUMNS.join(", ")}, extra`;
const COPY_RESULTS = `COPY bulkcheck.results (${RESULT_COLUMNS_LIST}) FROM STDIN`;

/**
 * The shared store: runs, tasks and the ledger in a team's PostgreSQL, with the embedded
 * store's semantics (sqlite-store.ts) for every machine at once. One open run per command
 * and scope is a partial unique index, so two machines creating it make one; a lease is
 * taken under a row lock; results are recorded a batch per statement and read through
 * cursors; lookups are one statement per batch of numbers.
 */
export class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly #db: PostgresDb;
  readonly #scopes = new Map<string, number>();

  private constructor(db: PostgresDb) {
    this.#db = db;
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

  async #scopeId(scope: Scope): Promise<number> {
    const key = `${scope.baseUrl}\n${scope.profile}`;
    let id = this.#scopes.get(key);
    if (id === undefined) {
      const select = "SELECT id FROM bulkcheck.scopes WHERE base_url = $1 AND profile = $2";
      let row = await this.#db.row(select, [scope.baseUrl, scope.profile]);
      if (!row) {
        await this.#db.run("INSERT INTO bulkcheck.scopes (base_url, profile) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
          scope.baseUrl,
          scope.profile,
        ]);
        row = await this.#db.row(select, [scope.baseUrl, scope.profile]);
      }
      id = Number(row![0]);
      this.#scopes.set(key, id);
    }
    return id;
  }

  // Runs

  async openRun(scope: Scope, identity: string): Promise<RunRecord | undefined> {
    const row = await this.#db.row(`SELECT ${RUN_COLUMNS} FROM ${RUNS} WHERE r.scope_id = $1 AND r.identity = $2 AND r.state = 'open'`, [
      await this.#scopeId(scope),
      identity,
    ]);
    return row && runOf(row);
  }

  async createRun(run: NewRun, lease: Lease): Promise<RunRecord | "exists"> {
    try {
      await this.#db.run(
        `INSERT INTO bulkcheck.runs (${RUN_INSERT_COLUMNS.join(", ")}) VALUES (${placeholders(RUN_INSERT_COLUMNS.length)})`,
        runValues(run, await this.#scopeId(run.scope), { ...lease, heartbeatAt: run.startedAt }),
      );
    } catch (error) {
      // Another process created an open run of the same command (or a run with this id) first.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return "exists";
      throw error;
    }
    return { ...run, lease: { ...lease, heartbeatAt: run.startedAt } };
  }

  claimRun(runId: string, lease: Lease, now: string, staleBefore: string, isAlive: (holder: Lease) => boolean): Promise<Lease | undefined> {
    return this.#db.transaction(async ({ query }) => {
      const [row] = await query(
        "SELECT lease_host, lease_pid, lease_nonce, COALESCE(heartbeat_at >= $2::timestamptz, false)::int FROM bulkcheck.runs WHERE id = $1 FOR UPDATE",
        [runId, instant(staleBefore)],
      );
      if (!row) throw new Error(`run ${runId} is not in the store`);
      const holder = leaseOf(row[0], row[1], row[2]);
      const fresh = row[3] === 1;
      if (holder && !sameLease(holder, lease) && fresh && isAlive(holder)) return holder;
      await query("UPDATE bulkcheck.runs SET lease_host = $1, lease_pid = $2, lease_nonce = $3, heartbeat_at = $4 WHERE id = $5", [
        lease.host,
        lease.pid,
        lease.nonce,
        now,
        runId,
      ]);
      return undefined;
    });
  }

  async heartbeat(runId: string, lease: Lease, now: string): Promise<void> {
    await this.#db.run(
      "UPDATE bulkcheck.runs SET heartbeat_at = $1 WHERE id = $2 AND lease_host = $3 AND lease_pid = $4 AND lease_nonce = $5",
      [now, runId, lease.host, lease.pid, lease.nonce],
    );
  }

  async releaseRun(runId: string, lease: Lease): Promise<void> {
    await this.#db.run(
      `UPDATE bulkcheck.runs SET lease_host = NULL, lease_pid = NULL, lease_nonce = NULL, heartbeat_at = NULL
       WHERE id = $1 AND lease_host = $2 AND lease_pid = $3 AND lease_nonce = $4`,
      [runId, lease.host, lease.pid, lease.nonce],
    );
  }

  async updateRun(runId: string, patch: RunPatch): Promise<void> {
    const set = new Assignments();
    for (const [column, value] of runPatchColumns(patch)) set.add(column, value);
    if (!set.empty) await this.#db.run(`UPDATE bulkcheck.runs SET ${set.sql} WHERE id = ${set.next(runId)}`, set.values);
  }

  async run(idOrPrefix: string): Promise<RunRecord | undefined> {
    const rows = await this.#db.rows(
      `SELECT ${RUN_COLUMNS} FROM ${RUNS} WHERE r.id = $1 OR r.id LIKE $2 ESCAPE '\\' ORDER BY r.id = $1 DESC LIMIT 2`,
      [idOrPrefix, `${idOrPrefix.replace(/[\\%_]/g, "\\$&")}%`],
    );
    const exact = rows.find((row) => row[0] === idOrPrefix);
    return exact ? runOf(exact) : rows.length === 1 ? runOf(rows[0]!) : undefined;
  }

  async runs(filter: RunFilter): Promise<RunRecord[]> {
    const clauses: string[] = [];
    const params: PgParam[] = [];
    const param = (value: PgParam) => `$${params.push(value)}`;
    if (filter.scope) clauses.push(`r.scope_id = ${param(await this.#scopeId(filter.scope))}`);
    if (filter.state) clauses.push(`r.state = ${param(filter.state)}`);
    if (filter.since) clauses.push(`r.started_at >= ${param(filter.since)}::timestamptz`);
    const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    const rows = await this.#db.rows(
      `SELECT ${RUN_COLUMNS} FROM ${RUNS} ${where} ORDER BY r.started_at DESC, r.seq DESC LIMIT ${param(filter.limit ?? null)}`,
      params,
    );
    return rows.map(runOf);
  }

  async copyRun(run: RunRecord): Promise<boolean> {
    const added = await this.#db.run(
      `INSERT INTO bulkcheck.runs (${RUN_INSERT_COLUMNS.join(", ")}) VALUES (${placeholders(RUN_INSERT_COLUMNS.length)}) ON CONFLICT (id) DO NOTHING`,
      runValues(run, await this.#scopeId(run.scope), run.lease),
    );
    return added > 0;
  }

  // Tasks

  async addTask(task: NewTask): Promise<TaskRecord> {
    const [[ref]] = (await this.#db.rows(
      `INSERT INTO bulkcheck.tasks (${TASK_INSERT_COLUMNS.join(", ")}) VALUES (${placeholders(TASK_INSERT_COLUMNS.length)}) RETURNING ref`,
      taskValues(task, await this.#scopeId(task.scope)),
    )) as [[number]];
    return { ...task, ref };
  }

  async updateTask(ref: number, patch: TaskPatch): Promise<void> {
    const set = new Assignments();
    for (const [column, value] of taskPatchColumns(patch)) set.add(column, value);
    if (patch.taskId !== undefined) {
      // A task id ends the upload that got it; another task than the part had has neither its staged result nor its date.
      set.raw("upload_started_at = NULL");
      const taskId = set.next(patch.taskId);
      for (const column of columnsOfAnotherTask(patch))
        set.raw(`${column} = CASE WHEN task_id IS NOT DISTINCT FROM ${taskId} THEN ${column} END`);
    }
    // The first check that saw the task succeed dates its results; later checks never move it.
    if (patch.checkedAt !== undefined) set.raw(`checked_at = COALESCE(checked_at, ${set.next(patch.checkedAt)})`);
    if (!set.empty) await this.#db.run(`UPDATE bulkcheck.tasks SET ${set.sql} WHERE ref = ${set.next(ref)}`, set.values);
  }

  async tasksOfRun(runId: string): Promise<TaskRecord[]> {
    return (await this.#db.rows(`SELECT ${TASK_COLUMNS} FROM ${TASKS} WHERE t.run_id = $1 ORDER BY t.part, t.ref`, [runId])).map(taskOf);
  }

  async taskById(scope: Scope, taskId: string): Promise<TaskRecord | undefined> {
    const row = await this.#db.row(
      `SELECT ${TASK_COLUMNS} FROM ${TASKS} WHERE t.scope_id = $1 AND t.task_id = $2 ORDER BY t.ref DESC LIMIT 1`,
      [await this.#scopeId(scope), taskId],
    );
    return row && taskOf(row);
  }

  async taskWithKey(scope: Scope, key: string): Promise<TaskRecord | undefined> {
    const row = await this.#db.row(`SELECT ${TASK_COLUMNS} FROM ${TASKS} WHERE t.scope_id = $1 AND t.idempotency_key = $2`, [
      await this.#scopeId(scope),
      key,
    ]);
    return row && taskOf(row);
  }

  async recentTasks(scope: Scope, limit: number): Promise<TaskRecord[]> {
    const rows = await this.#db.rows(
      `SELECT ${TASK_COLUMNS} FROM ${TASKS} WHERE t.scope_id = $1 AND t.task_id IS NOT NULL ORDER BY t.ref DESC LIMIT $2`,
      [await this.#scopeId(scope), Number.isFinite(limit) ? limit : null],
    );
    return rows.map(taskOf);
  }

  async tasksAfter(afterRef: number, limit: number): Promise<TaskRecord[]> {
    return (await this.#db.rows(`SELECT ${TASK_COLUMNS} FROM ${TASKS} WHERE t.ref > $1 ORDER BY t.ref LIMIT $2`, [afterRef, limit])).map(
      taskOf,
    );
  }

  async markUploading(ref: number, at: string | undefined): Promise<void> {
    await this.#db.run("UPDATE bulkcheck.tasks SET upload_started_at = $1 WHERE ref = $2", [at ?? null, ref]);
  }

  async activity(scope: Scope, since: string): Promise<{ uploading: number; unfinished: number }> {
    const [uploading, unfinished] = (await this.#db.row(
      `SELECT count(*) FILTER (WHERE task_id IS NULL AND upload_started_at >= $1::timestamptz),
              count(*) FILTER (WHERE task_id IS NOT NULL AND (status IS NULL OR status = 'processing'))
       FROM bulkcheck.tasks WHERE scope_id = $2`,
      [instant(since), await this.#scopeId(scope)],
    ))!;
    return { uploading: Number(uploading), unfinished: Number(unfinished) };
  }

  async unfinishedTasks(scope: Scope): Promise<UnfinishedTasks[]> {
    const rows = await this.#db.rows(
      `SELECT product, count(*), sum(coalesce(count, total, 0)) FROM bulkcheck.tasks
       WHERE scope_id = $1 AND task_id IS NOT NULL AND (status IS NULL OR status = 'processing')
       GROUP BY product ORDER BY product`,
      [await this.#scopeId(scope)],
    );
    return rows.map(([product, tasks, numbers]) => ({ product: String(product), tasks: Number(tasks), numbers: Number(numbers) }));
  }

  async addTaskNumbers(taskRef: number, identifiers: readonly number[]): Promise<void> {
    const sorted = Float64Array.from(identifiers).sort();
    await this.#db.transaction(async ({ query }) => {
      for (let at = 0; at < sorted.length; at += NUMBERS_PER_STATEMENT) {
        await query("INSERT INTO bulkcheck.task_numbers (task_ref, identifier) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING", [
          taskRef,
          numberArray(Array.from(sorted.subarray(at, at + NUMBERS_PER_STATEMENT))),
        ]);
      }
    });
  }

  async answeringTasks(scope: Scope, product: string, maxTaskRef: number): Promise<TaskRecord[]> {
    const rows = await this.#db.rows(
      `SELECT ${TASK_COLUMNS} FROM ${TASKS}
       WHERE t.scope_id = $1 AND t.product = $2 AND t.ref <= $3 AND (t.task_id IS NOT NULL OR t.recorded_at IS NOT NULL)`,
      [await this.#scopeId(scope), product, maxTaskRef],
    );
    return rows.map(taskOf);
  }

  async *taskNumbers(taskRef: number): AsyncIterable<readonly number[]> {
    const batches = this.#db.cursor("SELECT identifier FROM bulkcheck.task_numbers WHERE task_ref = $1", [taskRef], BATCH_ROWS);
    for await (const rows of batches) yield rows.map(([identifier]) => Number(identifier));
  }

  // Ledger

  async addResults(taskRef: number, columns: readonly string[], rows: readonly ResultRow[]): Promise<void> {
    const split = splitValues(columns);
    // Encoded a batch at a time as COPY sends them, so the next batch is encoded while the server stores the last.
    function* lines(): Iterable<string> {
      for (let at = 0; at < rows.length; at += BATCH_ROWS) {
        let batch = "";
        for (let index = at; index < Math.min(at + BATCH_ROWS, rows.length); index++) {
          const row = rows[index]!;
          const identifier = identifierNumber(row.identifier);
          if (identifier !== undefined) batch += `${taskRef}\t${identifier}\t${split(row.values).map(copyText).join("\t")}\n`;
        }
        yield batch;
      }
    }
    // Rows count for nothing until markRecorded, whose commit the server flushes to disk after
    // these (its log is written in order): so these commits need not wait for the disk.
    const write = (copy: (client: TransactionClient) => Promise<void>) =>
      this.#db.transaction(async (client) => {
        await client.query("SET LOCAL synchronous_commit = off");
        await copy(client);
      });
    try {
      await write(({ copyIn }) => copyIn(COPY_RESULTS, lines()));
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      await write(async ({ query, copyIn }) => {
        await query("CREATE TEMPORARY TABLE results_batch (LIKE bulkcheck.results) ON COMMIT DROP");
        await copyIn(`COPY results_batch (${RESULT_COLUMNS_LIST}) FROM STDIN`, lines());
        await query(
          `INSERT INTO bulkcheck.results (${RESULT_COLUMNS_LIST}) SELECT ${RESULT_COLUMNS_LIST} FROM results_batch ON CONFLICT DO NOTHING`,
        );
      });
    }
  }

  async markRecorded(taskRef: number, columns: readonly string[], at: string): Promise<void> {
    await this.#db.run("UPDATE bulkcheck.tasks SET recorded_at = $1, columns = $2 WHERE ref = $3", [at, JSON.stringify(columns), taskRef]);
  }

  async *freshResults(scope: Scope, product: string, since: string, maxTaskRef?: number): AsyncIterable<readonly FreshResult[]> {
    const tasks = await this.#db.rows(
      `SELECT ref FROM bulkcheck.tasks
       WHERE scope_id = $1 AND product = $2 AND checked_at >= $3::timestamptz AND recorded_at IS NOT NULL AND ref <= $4
       ORDER BY checked_at DESC, ref DESC`,
      [await this.#scopeId(scope), product, instant(since), maxTaskRef ?? Number.MAX_SAFE_INTEGER],
    );
    for (const [ref] of tasks) {
      const taskRef = Number(ref);
      // Each number range's numbers as one text value (at most NUMBER_RANGE of them): the
      // cursor returns some hundred values per million numbers instead of a row per number,
      // which halved the time to read them here.
      const ranges = this.#db.cursor(
        `SELECT string_agg(identifier::text, ',' ORDER BY identifier) FROM bulkcheck.results WHERE task_ref = $1
         GROUP BY identifier / ${NUMBER_RANGE} ORDER BY identifier / ${NUMBER_RANGE}`,
        [taskRef],
        RANGES_PER_FETCH,
      );
      for await (const rows of ranges) {
        for (const [numbers] of rows)
          yield String(numbers)
            .split(",")
            .map((identifier) => ({ identifier: Number(identifier), taskRef }));
      }
    }
  }

  async checkedAtOf(taskRefs: readonly number[]): Promise<Map<number, string>> {
    const found = new Map<number, string>();
    for (let at = 0; at < taskRefs.length; at += BATCH_ROWS) {
      const rows = await this.#db.rows(
        "SELECT ref, checked_at FROM bulkcheck.tasks WHERE ref = ANY($1::bigint[]) AND checked_at IS NOT NULL",
        [numberArray(taskRefs.slice(at, at + BATCH_ROWS))],
      );
      for (const [ref, checkedAt] of rows) found.set(Number(ref), String(checkedAt));
    }
    return found;
  }

  async maxTaskRef(): Promise<number> {
    return Number((await this.#db.row("SELECT COALESCE(max(ref), 0) FROM bulkcheck.tasks"))![0]);
  }

  async *taskResults(taskRef: number, identifiers?: ReadonlySet<number>): AsyncIterable<readonly LedgerRow[]> {
    const task = await this.#taskContext(taskRef);
    if (!task) return;
    for await (const rows of this.#resultPages(taskRef)) {
      const kept = identifiers ? rows.filter((row) => identifiers.has(Number(row[0]))) : rows;
      if (kept.length > 0) yield kept.map((row) => ledgerRowOf(row, 0, task));
    }
  }

  async lookup(identifiers: readonly string[], filter: LedgerFilter = {}): Promise<LedgerRow[]> {
    const numbers = identifiers.map(identifierNumber).filter((n) => n !== undefined);
    const rows: LedgerRow[] = [];
    const { where, params } = await this.#filterClause(filter, 2);
    for (let at = 0; at < numbers.length; at += BATCH_ROWS) {
      const found = await this.#db.rows(
        `SELECT ${RESULT_COLUMNS}, ${TASK_CONTEXT} FROM bulkcheck.results r JOIN ${TASKS} ON t.ref = r.task_ref
         WHERE r.identifier = ANY($1::bigint[]) AND t.recorded_at IS NOT NULL ${where} ORDER BY t.checked_at DESC, t.ref DESC`,
        [numberArray(numbers.slice(at, at + BATCH_ROWS)), ...params],
      );
      for (const row of found) rows.push(ledgerRowOf(row, 0, taskContextOf(row, RESULT_VALUE_COLUMNS.length + 2)));
    }
    return rows;
  }

  async *previousResults(taskRef: number): AsyncIterable<ReadonlyArray<{ current: LedgerRow; previous: LedgerRow }>> {
    const task = await this.#taskContext(taskRef);
    if (!task) return;
    for await (const current of this.#resultPages(taskRef)) {
      // Each number's latest result before this task's, of the same product and scope.
      const earlier = await this.#db.rows(
        `SELECT DISTINCT ON (r.identifier) ${RESULT_COLUMNS}, ${TASK_CONTEXT}
         FROM bulkcheck.results r JOIN ${TASKS} ON t.ref = r.task_ref, bulkcheck.tasks cur
         WHERE cur.ref = $2 AND r.identifier = ANY($1::bigint[]) AND t.scope_id = cur.scope_id AND t.product = cur.product
           AND (t.checked_at, t.ref) < (cur.checked_at, cur.ref)
           AND t.recorded_at IS NOT NULL
         ORDER BY r.identifier, t.checked_at DESC, t.ref DESC`,
        [numberArray(current.map((row) => Number(row[0]))), taskRef],
      );
      const previous = new Map(earlier.map((row) => [Number(row[0]), row]));
      const pairs = current.flatMap((row) => {
        const before = previous.get(Number(row[0]));
        return before
          ? [
              {
                current: ledgerRowOf(row, 0, task),
                previous: ledgerRowOf(before, 0, taskContextOf(before, RESULT_VALUE_COLUMNS.length + 2)),
              },
            ]
          : [];
      });
      if (pairs.length > 0) yield pairs;
    }
  }

  async forget(identifiers: readonly string[], options: ErasureOptions & { product?: string } = {}): Promise<Erasure> {
    const numbers = identifiers.map(identifierNumber).filter((n) => n !== undefined);
    const { product } = options;
    const ofProduct = product === undefined ? "" : " AND task_ref IN (SELECT ref FROM bulkcheck.tasks WHERE product = $2)";
    const batches = inBatches(numbers).map((batch) => [batch, ...(product === undefined ? [] : [product])]);
    // Vacuumed even when nothing is found: an erasure cut short before its VACUUM is completed by the next.
    return this.#erase(`identifier = ANY($1::bigint[])${ofProduct}`, batches, options, true);
  }

  prune(before: string, options: ErasureOptions = {}): Promise<Erasure> {
    return this.#erase(
      "task_ref IN (SELECT ref FROM bulkcheck.tasks WHERE checked_at < $1::timestamptz)",
      [[instant(before)]],
      options,
      false,
    );
  }

  forgetTasks(taskRefs: readonly number[]): Promise<Erasure> {
    return this.#erase(
      "task_ref = ANY($1::bigint[])",
      inBatches(taskRefs).map((batch) => [batch]),
      {},
      false,
    );
  }

  /** Deletes (or, with dryRun, counts) the results `where` selects, a statement per set of parameters, then vacuums them away. */
  async #erase(where: string, batches: readonly PgParam[][], options: ErasureOptions, alwaysVacuum: boolean): Promise<Erasure> {
    let results = 0;
    for (const params of batches) {
      results += options.dryRun
        ? Number((await this.#db.row(`SELECT count(*) FROM bulkcheck.results WHERE ${where}`, params))![0])
        : await this.#db.transaction(async ({ query }) => {
            // A task's numbers hold the digits too (those in flight, and those without a result).
            await query(`DELETE FROM bulkcheck.task_numbers WHERE ${where}`, params);
            return (await query(`DELETE FROM bulkcheck.results WHERE ${where} RETURNING 1`, params)).length;
          });
    }
    if (options.dryRun || (results === 0 && !alwaysVacuum)) return { results };
    const [uncleared] = await this.#db.maintain(RESULTS_VACUUM);
    return uncleared === undefined ? { results } : { results, uncleared };
  }

  async stats(): Promise<LedgerStats> {
    const [results, numbers, tasks, oldest, newest, bytes] = (await this.#db.row(
      `WITH recorded AS (
         SELECT r.identifier, t.checked_at, t.ref FROM bulkcheck.results r JOIN bulkcheck.tasks t ON t.ref = r.task_ref
         WHERE t.recorded_at IS NOT NULL
       )
       SELECT count(*), count(DISTINCT identifier), count(DISTINCT ref), min(checked_at), max(checked_at),
              (SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
               WHERE c.relnamespace = 'bulkcheck'::regnamespace AND c.relkind = 'r')
       FROM recorded`,
    ))!;
    const groups = (
      await this.#db.rows(
        `SELECT s.base_url, s.profile, t.product, count(*), count(DISTINCT r.identifier), min(t.checked_at), max(t.checked_at)
         FROM bulkcheck.results r JOIN ${TASKS} ON t.ref = r.task_ref
         WHERE t.recorded_at IS NOT NULL
         GROUP BY s.base_url, s.profile, t.product ORDER BY s.base_url, s.profile, t.product`,
      )
    ).map(statsGroupOf);
    return {
      results: Number(results),
      numbers: Number(numbers),
      tasks: Number(tasks),
      ...(oldest === null ? {} : { oldest: String(oldest) }),
      ...(newest === null ? {} : { newest: String(newest) }),
      groups,
      bytes: Number(bytes),
    };
  }

  async *exportResults(filter: LedgerFilter): AsyncIterable<readonly LedgerRow[]> {
    const { where, params } = await this.#filterClause(filter, 1);
    const tasks = await this.#db.rows(
      `SELECT t.ref FROM bulkcheck.tasks t WHERE t.recorded_at IS NOT NULL ${where} ORDER BY t.checked_at, t.ref`,
      params,
    );
    for (const [ref] of tasks) yield* this.taskResults(Number(ref));
  }

  close(): Promise<void> {
    return this.#db.close();
  }

  /** A task's result rows (RESULT_COLUMNS) in batches, in the order of their numbers. */
  #resultPages(taskRef: number): AsyncIterable<ColumnValue[][]> {
    return this.#db.cursor(
      `SELECT ${RESULT_COLUMNS} FROM bulkcheck.results r WHERE r.task_ref = $1 ORDER BY r.identifier`,
      [taskRef],
      BATCH_ROWS,
    );
  }

  /** A WHERE fragment (starting with AND) for a ledger filter over `t` (tasks), its parameters numbered from `first`. */
  async #filterClause(filter: LedgerFilter, first: number): Promise<{ where: string; params: PgParam[] }> {
    const clauses: string[] = [];
    const params: PgParam[] = [];
    const param = (value: PgParam) => `$${first + params.push(value) - 1}`;
    if (filter.scope) clauses.push(`t.scope_id = ${param(await this.#scopeId(filter.scope))}`);
    if (filter.product) clauses.push(`t.product = ${param(filter.product)}`);
    if (filter.since) clauses.push(`t.checked_at >= ${param(filter.since)}::timestamptz`);
    return { where: clauses.map((clause) => `AND ${clause}`).join(" "), params };
  }

  async #taskContext(taskRef: number): Promise<TaskContext | undefined> {
    const row = await this.#db.row(`SELECT ${TASK_CONTEXT} FROM ${TASKS} WHERE t.ref = $1 AND t.checked_at IS NOT NULL`, [taskRef]);
    return row && taskContextOf(row, 0);
  }
}

const UNIQUE_VIOLATION = "23505";

/**
 * Clears erased results out of the table's and its indexes' pages now rather than when
 * autovacuum comes by: afterwards their bytes are in none of the table's files. It reads
 * every page not known to be all live, and both indexes, and locks out no reader or writer
 * (VACUUM FULL would rewrite the whole table under an exclusive lock, stopping every
 * machine's runs). ANALYZE computes the planner's statistics of the table (which list some of
 * its values, erased numbers among them) again from what is left. What stays: the server's write-ahead log until it is recycled, the
 * catalog's earlier statistics row until the server vacuums its catalog, replicas and
 * backups (see docs/files-and-security.md). A user who does not own the table (nor has
 * MAINTAIN on it) may not VACUUM it: the server skips it with a warning, which is passed on.
 */
const RESULTS_VACUUM = "VACUUM (ANALYZE) bulkcheck.results, bulkcheck.task_numbers";

/** Numbers or references as array literals of BATCH_ROWS each (see numberArray). */
function inBatches(values: readonly number[]): string[] {
  const batches: string[] = [];
  for (let at = 0; at < values.length; at += BATCH_ROWS) batches.push(numberArray(values.slice(at, at + BATCH_ROWS)));
  return batches;
}

/** A moment as a parameter: the stores' callers write "the beginning of time" as "". */
function instant(iso: string): string {
  return iso === "" ? "-infinity" : iso;
}

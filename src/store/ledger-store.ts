import { ERASED_FOR_TASK, ERASURE_BOUND, ErasedNumbers, erasedHash, newHashKey, SPENT_ERASURES } from "./erasures.js";
import { identifierNumber, RESULT_VALUE_COLUMNS } from "./result-values.js";
import { deleteTaskNumbers, eraseTaskNumbers } from "./task-numbers.js";
import { ledgerRowOf, statsGroupOf, taskContextOf, type TaskContext } from "./store-rows.js";
import type { SqlParam, SqlSession } from "./sql-session.js";
import type {
  ColumnValue,
  ErasedIdentifiers,
  Erasure,
  ErasureOptions,
  StoredResult,
  Ledger,
  LedgerFilter,
  RememberedErasure,
  LedgerRow,
  LedgerStats,
  KeyOrderedResults,
  Scope,
} from "./store.js";

/** Numbers or references bound per statement, as one parameter (see Dialect.numbers). */
const BATCH = 5000;
/** Hashes of erased numbers inserted per statement (two values each). */
const HASHES_PER_STATEMENT = 500;

/**
 * The result ledger: what both engines do alike is written here once (a task's rows and
 * their earlier results, lookups, erasure, statistics, export); each engine records a
 * result, pages through a task's rows and lists fresh results its own way.
 */
/**
 * Lines of a task's result per piece of csvOfTask (about 100 KB): pieces of 20,000 lines
 * (400 KB, past V8's large-object size) doubled the garbage collector's time of an output
 * written from the ledger, and made it slower than reading the rows one by one.
 */
const CSV_LINES_PER_PIECE = 5000;

export abstract class SqlLedger implements Ledger {
  /** A ledger row's task, as taskContextOf reads it. */
  protected readonly taskContext: string;
  /** A result row as ledgerRowOf reads it: `r.identifier`, the value columns, `extra`. */
  protected readonly resultColumns: string;

  constructor(protected readonly session: SqlSession) {
    const { jsonText } = session.dialect;
    this.taskContext = `s.base_url, s.profile, t.product, t.task_id, t.checked_at, ${jsonText("t.columns")}`;
    this.resultColumns = `r.identifier, ${RESULT_VALUE_COLUMNS.map((column) => `r.${column}`).join(", ")}, ${jsonText("r.extra")}`;
  }

  abstract record(taskRef: number, rows: KeyOrderedResults, at: string): Promise<void>;
  /** The numbers of a task's result rows, in batches. */
  protected abstract resultNumbers(taskRef: number): AsyncIterable<readonly number[]>;
  /** A task's result rows (resultColumns) in batches, in the order of their numbers. */
  protected abstract resultPages(taskRef: number): AsyncIterable<ColumnValue[][]>;
  /** A task's rows as CSV lines (`line`, an expression over `results`' columns), in number order, a piece of up to `linesPerPiece` at a time. */
  protected abstract csvPieces(taskRef: number, line: string, linesPerPiece: number): AsyncIterable<string>;
  /**
   * Clears erased rows out of the store's files now (SQLite: the write-ahead log's checkpoint;
   * PostgreSQL: VACUUM, or with `rewrite` VACUUM FULL, see postgres-store.ts). Returns why
   * their bytes may stay for now, in the database's own words.
   */
  protected abstract clearErased(rewrite: boolean): Promise<string | undefined>;
  /** Bytes on disk (or in the database) the store takes. */
  protected abstract bytes(): Promise<number>;

  async *latest(scope: Scope, product: string, maxTaskRef?: number): AsyncIterable<readonly StoredResult[]> {
    const tasks = await this.session.rows(
      `SELECT ref FROM tasks WHERE scope_id = ? AND product = ? AND recorded_at IS NOT NULL AND ref <= ?
       ORDER BY checked_at DESC, ref DESC`,
      [await this.session.scopeId(scope), product, maxTaskRef ?? Number.MAX_SAFE_INTEGER],
    );
    for (const [ref] of tasks) {
      const taskRef = Number(ref);
      for await (const numbers of this.resultNumbers(taskRef)) yield numbers.map((identifier) => ({ identifier, taskRef }));
    }
  }

  async *ofTask(taskRef: number, identifiers?: ReadonlySet<number>): AsyncIterable<readonly LedgerRow[]> {
    const task = await this.taskContextOf(taskRef);
    if (!task) return;
    for await (const rows of this.resultPages(taskRef)) {
      const kept = identifiers ? rows.filter((row) => identifiers.has(Number(row[0]))) : rows;
      if (kept.length > 0) yield kept.map((row) => ledgerRowOf(row, 0, task));
    }
  }

  async csvOfTask(taskRef: number): Promise<{ header: string; lines: AsyncIterable<string> } | undefined> {
    const task = await this.taskContextOf(taskRef);
    const stored: readonly string[] = RESULT_VALUE_COLUMNS;
    if (!task || task.columns.length === 0 || !task.columns.every((column) => stored.includes(column))) return undefined;
    if (await this.session.row("SELECT 1 FROM results WHERE task_ref = ? AND extra IS NOT NULL LIMIT 1", [taskRef])) return undefined;
    // The stored columns' names are plain words: the header needs no quoting.
    const line = ["identifier", ...task.columns.map(this.session.dialect.csvField)].join(" || ',' || ");
    return { header: `${["identifier", ...task.columns].join(",")}\n`, lines: this.csvPieces(taskRef, line, CSV_LINES_PER_PIECE) };
  }

  async *previous(taskRef: number): AsyncIterable<ReadonlyArray<{ current: LedgerRow; previous: LedgerRow }>> {
    const task = await this.taskContextOf(taskRef);
    if (!task) return;
    for await (const current of this.resultPages(taskRef)) {
      // The same numbers' results before this task's, of the same product and scope, each number's latest first.
      const earlier = await this.session.rows(
        `SELECT ${this.resultColumns}, ${this.taskContext}
         FROM results r JOIN tasks t ON t.ref = r.task_ref JOIN scopes s ON s.id = t.scope_id JOIN tasks cur ON cur.ref = ?
         WHERE ${this.session.dialect.inNumbers("r.identifier")} AND t.scope_id = cur.scope_id AND t.product = cur.product
           AND (t.checked_at, t.ref) < (cur.checked_at, cur.ref) AND t.recorded_at IS NOT NULL
         ORDER BY r.identifier, t.checked_at DESC, t.ref DESC`,
        [taskRef, this.session.dialect.numbers(current.map((row) => Number(row[0])))],
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

  async lookup(identifiers: readonly string[], filter: LedgerFilter = {}): Promise<LedgerRow[]> {
    const numbers = identifiers.map(identifierNumber).filter((n) => n !== undefined);
    const rows: LedgerRow[] = [];
    const { where, params } = await this.#filterClause(filter);
    for (let at = 0; at < numbers.length; at += BATCH) {
      const found = await this.session.rows(
        `SELECT ${this.resultColumns}, ${this.taskContext} FROM results r JOIN tasks t ON t.ref = r.task_ref JOIN scopes s ON s.id = t.scope_id
         WHERE ${this.session.dialect.inNumbers("r.identifier")} AND t.recorded_at IS NOT NULL ${where} ORDER BY t.checked_at DESC, t.ref DESC`,
        [this.session.dialect.numbers(numbers.slice(at, at + BATCH)), ...params],
      );
      for (const row of found) rows.push(ledgerRowOf(row, 0, taskContextOf(row, RESULT_VALUE_COLUMNS.length + 2)));
    }
    return rows;
  }

  forget(identifiers: readonly string[], options: ErasureOptions & { product?: string } = {}): Promise<Erasure> {
    // Each once: a number given twice is remembered once.
    const numbers = [...new Set(identifiers.map(identifierNumber).filter((n) => n !== undefined))];
    const { product } = options;
    const ofProduct = product === undefined ? "" : " AND task_ref IN (SELECT ref FROM tasks WHERE product = ?)";
    const batches = this.#inBatches(numbers).map((batch) => [batch, ...(product === undefined ? [] : [product])]);
    const remember = this.#rememberer(numbers, product);
    // Cleared even when nothing is found: an erasure cut short before its clearing is completed by the next.
    // What a forget erases is rewritten out of the files, not only marked free (see clearErased).
    return this.#erase(`${this.session.dialect.inNumbers("identifier")}${ofProduct}`, batches, options, {
      always: true,
      rewrite: true,
      remember,
      taskNumbers: (session, index) => eraseTaskNumbers(session, numbers.slice(index * BATCH, (index + 1) * BATCH), product),
    });
  }

  async erasedSince(taskRef: number): Promise<ErasedIdentifiers | undefined> {
    return ErasedNumbers.of(await this.session.rows(ERASED_FOR_TASK, [taskRef, taskRef]));
  }

  dropSpentErasures(): Promise<number> {
    return this.session.transaction(async (session) => {
      await session.run(`DELETE FROM erased_numbers WHERE erasure_id IN (${SPENT_ERASURES})`);
      return session.run(`DELETE FROM erasures WHERE id IN (${SPENT_ERASURES})`);
    });
  }

  async erasures(): Promise<RememberedErasure[]> {
    const rows = await this.session.rows(
      `SELECT e.id, e.erased_at, e.product, e.hash_key, n.hash FROM erasures e JOIN erased_numbers n ON n.erasure_id = e.id ORDER BY e.id`,
    );
    const byId = new Map<string, RememberedErasure>();
    for (const [id, erasedAt, product, hashKey, hash] of rows) {
      let erasure = byId.get(String(id));
      if (!erasure) {
        erasure = {
          erasedAt: String(erasedAt),
          ...(product === null ? {} : { product: String(product) }),
          hashKey: String(hashKey),
          hashes: [],
        };
        byId.set(String(id), erasure);
      }
      erasure.hashes.push(String(hash));
    }
    return [...byId.values()];
  }

  rememberErasure(erasure: RememberedErasure): Promise<boolean> {
    return this.session.transaction(async (session) => {
      const { lockErasures } = session.dialect;
      if (lockErasures !== undefined) await session.rows(lockErasures);
      if (await session.row("SELECT 1 FROM erasures WHERE hash_key = ?", [erasure.hashKey])) return false;
      const [lastTaskRef] = (await session.row("SELECT max(ref) FROM tasks"))!;
      if (lastTaskRef === null) return false;
      const [[id]] = (await session.rows(
        "INSERT INTO erasures (erased_at, product, last_task_ref, hash_key) VALUES (?, ?, ?, ?) RETURNING id",
        [erasure.erasedAt, erasure.product ?? null, Number(lastTaskRef), erasure.hashKey],
      )) as [[number]];
      await insertHashes(session, Number(id), erasure.hashes);
      return true;
    });
  }

  /**
   * Remembers the numbers of batch `index` (BATCH of `numbers` each) in the transaction `session`
   * that erases them, under one erasure for the whole forget, made in the first batch's
   * transaction if a run that may still record results has a task by then (see erasures.ts).
   * Returns how many it remembered.
   */
  #rememberer(numbers: readonly number[], product: string | undefined): (session: SqlSession, index: number) => Promise<number> {
    let erasure: { id: number; key: string } | undefined;
    return async (session, index) => {
      if (index === 0) {
        const [lastTaskRef, live] = (await session.row(ERASURE_BOUND))!;
        if (lastTaskRef === null || !Number(live)) return 0;
        const key = newHashKey();
        const [[id]] = (await session.rows(
          "INSERT INTO erasures (erased_at, product, last_task_ref, hash_key) VALUES (?, ?, ?, ?) RETURNING id",
          [new Date().toISOString(), product ?? null, Number(lastTaskRef), key],
        )) as [[number]];
        erasure = { id: Number(id), key };
      }
      if (!erasure) return 0;
      const { id, key } = erasure;
      const hashes = numbers.slice(index * BATCH, (index + 1) * BATCH).map((number) => erasedHash(key, number));
      await insertHashes(session, id, hashes);
      return hashes.length;
    };
  }

  prune(before: string, options: ErasureOptions = {}): Promise<Erasure> {
    return this.#erase("task_ref IN (SELECT ref FROM tasks WHERE checked_at < ?)", [[this.session.dialect.instant(before)]], options, {
      always: false,
      rewrite: false,
    });
  }

  forgetTasks(taskRefs: readonly number[]): Promise<Erasure> {
    return this.#erase(
      this.session.dialect.inNumbers("task_ref"),
      this.#inBatches(taskRefs).map((batch) => [batch]),
      {},
      { always: false, rewrite: false },
    );
  }

  /**
   * Deletes (or, with dryRun, counts) the results `where` selects, and the tasks' numbers it
   * selects, a transaction per set of parameters (which `clear.remember` joins, given the
   * set's index), then clears them out of the files: `always` even when nothing was found, and
   * with `rewrite` (when something was) by rewriting the tables.
   */
  async #erase(
    where: string,
    batches: readonly SqlParam[][],
    options: ErasureOptions,
    clear: {
      always: boolean;
      rewrite: boolean;
      remember?: (session: SqlSession, index: number) => Promise<number>;
      /** Takes the erased numbers out of the tasks' numbers, when `where` does not select whole tasks. */
      taskNumbers?: (session: SqlSession, index: number) => Promise<number>;
    },
  ): Promise<Erasure> {
    let results = 0;
    let numbers = 0;
    let remembered = 0;
    for (const [index, params] of batches.entries()) {
      if (options.dryRun) {
        results += Number((await this.session.row(`SELECT count(*) FROM results WHERE ${where}`, params))![0]);
        continue;
      }
      await this.session.transaction(async (session) => {
        const { lockErasures } = session.dialect;
        if (lockErasures !== undefined) await session.rows(lockErasures);
        if (clear.remember) remembered += await clear.remember(session, index);
        // A task's numbers hold the digits too (those in flight, and those without a result).
        numbers += clear.taskNumbers ? await clear.taskNumbers(session, index) : await deleteTaskNumbers(session, where, params);
        results += await session.run(`DELETE FROM results WHERE ${where}`, params);
      });
    }
    const kept = remembered > 0 ? { remembered } : {};
    const erased = results + numbers > 0;
    if (options.dryRun || (!erased && !clear.always)) return { results, ...kept };
    const uncleared = await this.clearErased(clear.rewrite && erased);
    return { results, ...kept, ...(uncleared === undefined ? {} : { uncleared }) };
  }

  async stats(): Promise<LedgerStats> {
    const [results, numbers, tasks, oldest, newest] = (await this.session.row(
      `WITH recorded AS (SELECT r.identifier, t.checked_at, t.ref FROM results r JOIN tasks t ON t.ref = r.task_ref WHERE t.recorded_at IS NOT NULL)
       SELECT count(*), count(DISTINCT identifier), count(DISTINCT ref), min(checked_at), max(checked_at) FROM recorded`,
    ))!;
    const groups = (
      await this.session.rows(
        `SELECT s.base_url, s.profile, t.product, count(*), count(DISTINCT r.identifier), min(t.checked_at), max(t.checked_at)
         FROM results r JOIN tasks t ON t.ref = r.task_ref JOIN scopes s ON s.id = t.scope_id
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
      bytes: await this.bytes(),
    };
  }

  async *export(filter: LedgerFilter): AsyncIterable<readonly LedgerRow[]> {
    const { where, params } = await this.#filterClause(filter);
    const tasks = await this.session.rows(
      `SELECT t.ref FROM tasks t WHERE t.recorded_at IS NOT NULL ${where} ORDER BY t.checked_at, t.ref`,
      params,
    );
    for (const [ref] of tasks) yield* this.ofTask(Number(ref));
  }

  /** What a ledger row takes from its task, for a task seen succeeded (undefined otherwise). */
  protected async taskContextOf(taskRef: number): Promise<TaskContext | undefined> {
    const row = await this.session.row(
      `SELECT ${this.taskContext} FROM tasks t JOIN scopes s ON s.id = t.scope_id WHERE t.ref = ? AND t.checked_at IS NOT NULL`,
      [taskRef],
    );
    return row && taskContextOf(row, 0);
  }

  /** A WHERE fragment (starting with AND) for a ledger filter over `t` (tasks). */
  async #filterClause(filter: LedgerFilter): Promise<{ where: string; params: SqlParam[] }> {
    const clauses: string[] = [];
    const params: SqlParam[] = [];
    if (filter.scope) {
      clauses.push("t.scope_id = ?");
      params.push(await this.session.scopeId(filter.scope));
    }
    if (filter.product) {
      clauses.push("t.product = ?");
      params.push(filter.product);
    }
    if (filter.since) {
      clauses.push("t.checked_at >= ?");
      params.push(this.session.dialect.instant(filter.since));
    }
    return { where: clauses.map((clause) => `AND ${clause}`).join(" "), params };
  }

  /** Numbers or references as parameters of BATCH each. */
  #inBatches(values: readonly number[]): SqlParam[] {
    const batches: SqlParam[] = [];
    for (let at = 0; at < values.length; at += BATCH) batches.push(this.session.dialect.numbers(values.slice(at, at + BATCH)));
    return batches;
  }
}

/** Writes an erasure's hashes, HASHES_PER_STATEMENT a statement. */
async function insertHashes(session: SqlSession, erasureId: number, hashes: readonly string[]): Promise<void> {
  for (let at = 0; at < hashes.length; at += HASHES_PER_STATEMENT) {
    const some = hashes.slice(at, at + HASHES_PER_STATEMENT);
    await session.run(
      `INSERT INTO erased_numbers (erasure_id, hash) VALUES ${some.map(() => "(?, ?)").join(", ")}`,
      some.flatMap((hash) => [erasureId, hash]),
    );
  }
}

import { columnsOfAnotherTask, TASK_INSERT_COLUMNS, taskOf, taskPatchColumns, taskValues } from "./store-rows.js";
import { addTaskNumbers, taskNumbers } from "./task-numbers.js";
import { questionMarks, type SqlParam, type SqlSession } from "./sql-session.js";
import type { NewTask, Scope, TaskPatch, TaskRecord, TaskStore, UnfinishedTasks } from "./store.js";

/** References or numbers bound per statement, as one parameter (see Dialect.numbers). */
const BATCH = 5000;

/** Tasks and their numbers (see task-numbers.ts), written once for both engines (see SqlSession). */
export class SqlTaskStore implements TaskStore {
  readonly #columns: string;

  constructor(protected readonly session: SqlSession) {
    // The columns of a task, in the order store-rows.ts reads them.
    this.#columns = `t.ref, s.base_url, s.profile, t.run_id, t.part, t.parts, t.idempotency_key, t.task_id, t.product, t.country, t.count,
      t.sha256, t.submitted_at, t.created_at, t.status, t.total, t.success_cnt, t.failure_cnt, t.checked_at, t.retry_of,
      ${session.dialect.flag("t.replayed")}, t.recorded_at, t.staged_file, t.staged_bytes, t.staged_sha256`;
  }

  async #select(where: string, params: readonly SqlParam[]): Promise<TaskRecord[]> {
    const rows = await this.session.rows(`SELECT ${this.#columns} FROM tasks t JOIN scopes s ON s.id = t.scope_id WHERE ${where}`, params);
    return rows.map(taskOf);
  }

  async add(task: NewTask): Promise<TaskRecord> {
    const [[ref]] = (await this.session.rows(
      `INSERT INTO tasks (${TASK_INSERT_COLUMNS.join(", ")}) VALUES (${questionMarks(TASK_INSERT_COLUMNS.length)}) RETURNING ref`,
      taskValues(task, await this.session.scopeId(task.scope)),
    )) as [[number]];
    return { ...task, ref: Number(ref) };
  }

  async update(ref: number, patch: TaskPatch): Promise<void> {
    const given = taskPatchColumns(patch).filter(([, value]) => value !== undefined);
    const sets = given.map(([column]) => `${column} = ?`);
    const values: SqlParam[] = given.map(([, value]) => value!);
    if (patch.taskId !== undefined) {
      // A task id ends the upload that got it; another task than the part had (uploaded again, the
      // service having forgotten the first) has neither its staged result nor its date.
      sets.push("upload_started_at = NULL");
      for (const column of columnsOfAnotherTask(patch)) {
        sets.push(`${column} = CASE WHEN task_id IS NOT DISTINCT FROM ? THEN ${column} END`);
        values.push(patch.taskId);
      }
    }
    // The first check that saw the task succeed dates its results; later checks never move it.
    if (patch.checkedAt !== undefined) {
      sets.push("checked_at = COALESCE(checked_at, ?)");
      values.push(patch.checkedAt);
    }
    if (sets.length > 0) await this.session.run(`UPDATE tasks SET ${sets.join(", ")} WHERE ref = ?`, [...values, ref]);
  }

  ofRun(runId: string): Promise<TaskRecord[]> {
    return this.#select("t.run_id = ? ORDER BY t.part, t.ref", [runId]);
  }

  async byId(scope: Scope, taskId: string): Promise<TaskRecord | undefined> {
    return (
      await this.#select("t.scope_id = ? AND t.task_id = ? ORDER BY t.ref DESC LIMIT 1", [await this.session.scopeId(scope), taskId])
    )[0];
  }

  async withKey(scope: Scope, key: string): Promise<TaskRecord | undefined> {
    return (await this.#select("t.scope_id = ? AND t.idempotency_key = ?", [await this.session.scopeId(scope), key]))[0];
  }

  async recent(scope: Scope, limit: number): Promise<TaskRecord[]> {
    return this.#select("t.scope_id = ? AND t.task_id IS NOT NULL ORDER BY t.ref DESC LIMIT ?", [
      await this.session.scopeId(scope),
      Number.isFinite(limit) ? limit : this.session.dialect.noLimit,
    ]);
  }

  after(afterRef: number, limit: number): Promise<TaskRecord[]> {
    return this.#select("t.ref > ? ORDER BY t.ref LIMIT ?", [afterRef, limit]);
  }

  async markUploading(ref: number, at: string | undefined): Promise<void> {
    await this.session.run("UPDATE tasks SET upload_started_at = ? WHERE ref = ?", [at ?? null, ref]);
  }

  async activity(scope: Scope, since: string): Promise<{ uploading: number; unfinished: number }> {
    const [uploading, unfinished] = (await this.session.row(
      `SELECT count(*) FILTER (WHERE task_id IS NULL AND upload_started_at >= ?),
              count(*) FILTER (WHERE task_id IS NOT NULL AND (status IS NULL OR status = 'processing'))
       FROM tasks WHERE scope_id = ?`,
      [this.session.dialect.instant(since), await this.session.scopeId(scope)],
    ))!;
    return { uploading: Number(uploading), unfinished: Number(unfinished) };
  }

  async unfinished(scope: Scope): Promise<UnfinishedTasks[]> {
    const rows = await this.session.rows(
      `SELECT product, count(*), sum(coalesce(count, total, 0)) FROM tasks
       WHERE scope_id = ? AND task_id IS NOT NULL AND (status IS NULL OR status = 'processing')
       GROUP BY product ORDER BY product`,
      [await this.session.scopeId(scope)],
    );
    return rows.map(([product, tasks, numbers]) => ({ product: String(product), tasks: Number(tasks), numbers: Number(numbers) }));
  }

  async counts(): Promise<{ submitted: number; unfinished: number }> {
    const [submitted, unfinished] = (await this.session.row(
      `SELECT count(*), count(*) FILTER (WHERE status IS NULL OR status = 'processing') FROM tasks WHERE task_id IS NOT NULL`,
    ))!;
    return { submitted: Number(submitted), unfinished: Number(unfinished) };
  }

  addNumbers(taskRef: number, identifiers: ArrayLike<number>): Promise<void> {
    return addTaskNumbers(this.session, taskRef, identifiers);
  }

  numbers(taskRef: number): AsyncIterable<readonly number[]> {
    return taskNumbers(this.session, taskRef);
  }

  async answering(scope: Scope, product: string, maxTaskRef: number): Promise<TaskRecord[]> {
    return this.#select(
      `t.scope_id = ? AND t.product = ? AND t.ref <= ?
       AND (t.task_id IS NOT NULL OR t.recorded_at IS NOT NULL OR t.run_id IN (SELECT id FROM runs WHERE state = 'open'))`,
      [await this.session.scopeId(scope), product, maxTaskRef],
    );
  }

  async addedAfter(scope: Scope, product: string, afterRef: number): Promise<boolean> {
    const row = await this.session.row("SELECT 1 FROM tasks WHERE scope_id = ? AND product = ? AND ref > ? LIMIT 1", [
      await this.session.scopeId(scope),
      product,
      afterRef,
    ]);
    return row !== undefined;
  }

  async checkedAt(taskRefs: readonly number[]): Promise<Map<number, string>> {
    const found = new Map<number, string>();
    for (let at = 0; at < taskRefs.length; at += BATCH) {
      const rows = await this.session.rows(
        `SELECT ref, checked_at FROM tasks WHERE ${this.session.dialect.inNumbers("ref")} AND checked_at IS NOT NULL`,
        [this.session.dialect.numbers(taskRefs.slice(at, at + BATCH))],
      );
      for (const [ref, checkedAt] of rows) found.set(Number(ref), String(checkedAt));
    }
    return found;
  }

  async maxRef(): Promise<number> {
    return Number((await this.session.row("SELECT COALESCE(max(ref), 0) FROM tasks"))![0]);
  }
}

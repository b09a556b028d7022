import { leaseOf, RUN_INSERT_COLUMNS, runOf, runPatchColumns, runValues, sameLease } from "./store-rows.js";
import { questionMarks, type SqlParam, type SqlSession } from "./sql-session.js";
import type { Lease, NewRun, RunFilter, RunPatch, RunRecord, RunStore, Scope } from "./store.js";

/** Runs and their leases, written once for both engines (see SqlSession). */
export class SqlRunStore implements RunStore {
  readonly #runColumns: string;

  constructor(private readonly session: SqlSession) {
    const { jsonText } = session.dialect;
    // The columns of a run, in the order store-rows.ts reads them.
    this.#runColumns = `r.id, s.base_url, s.profile, r.identity, r.kind, r.state, r.started_at, r.finished_at, r.product, r.country,
      ${["r.source", "r.settings", "r.prepared", "r.plan", "r.output"].map(jsonText).join(", ")},
      r.host, r.os_user, r.lease_host, r.lease_pid, r.lease_nonce, r.heartbeat_at, r.note`;
  }

  #select(where: string): string {
    return `SELECT ${this.#runColumns} FROM runs r JOIN scopes s ON s.id = r.scope_id WHERE ${where}`;
  }

  async open(scope: Scope, identity: string): Promise<RunRecord | undefined> {
    const row = await this.session.row(this.#select("r.scope_id = ? AND r.identity = ? AND r.state = 'open'"), [
      await this.session.scopeId(scope),
      identity,
    ]);
    return row && runOf(row);
  }

  async create(run: NewRun, lease: Lease): Promise<RunRecord | "exists"> {
    const leased = { ...lease, heartbeatAt: run.startedAt };
    const values = runValues(run, await this.session.scopeId(run.scope), leased);
    try {
      // A transaction of its own (a savepoint inside a caller's): a refused row leaves the caller's transaction usable.
      await this.session.transaction((session) => session.run(INSERT_RUN, values));
    } catch (error) {
      // Another process created an open run of the same command (or a run with this id) first.
      if (this.session.dialect.isUniqueViolation(error)) return "exists";
      throw error;
    }
    return { ...run, lease: leased };
  }

  claim(runId: string, lease: Lease, now: string, staleBefore: string, isAlive: (holder: Lease) => boolean): Promise<Lease | undefined> {
    return this.session.transaction(async (session) => {
      const row = await session.row(
        `SELECT lease_host, lease_pid, lease_nonce, CASE WHEN heartbeat_at >= ? THEN 1 ELSE 0 END FROM runs WHERE id = ?${session.dialect.lockRow}`,
        [session.dialect.instant(staleBefore), runId],
      );
      if (!row) throw new Error(`run ${runId} is not in the store`);
      const holder = leaseOf(row[0], row[1], row[2]);
      if (holder && !sameLease(holder, lease) && Number(row[3]) === 1 && isAlive(holder)) return holder;
      await session.run("UPDATE runs SET lease_host = ?, lease_pid = ?, lease_nonce = ?, heartbeat_at = ? WHERE id = ?", [
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
    await this.session.run(`UPDATE runs SET heartbeat_at = ? WHERE id = ? AND ${HELD_BY}`, [
      now,
      runId,
      lease.host,
      lease.pid,
      lease.nonce,
    ]);
  }

  async release(runId: string, lease: Lease): Promise<void> {
    await this.session.run(
      `UPDATE runs SET lease_host = NULL, lease_pid = NULL, lease_nonce = NULL, heartbeat_at = NULL WHERE id = ? AND ${HELD_BY}`,
      [runId, lease.host, lease.pid, lease.nonce],
    );
  }

  async discard(runId: string): Promise<void> {
    await this.session.run("DELETE FROM runs WHERE id = ? AND plan IS NULL AND NOT EXISTS (SELECT 1 FROM tasks WHERE run_id = ?)", [
      runId,
      runId,
    ]);
  }

  async update(runId: string, patch: RunPatch): Promise<void> {
    const given = runPatchColumns(patch).filter(([, value]) => value !== undefined);
    if (given.length === 0) return;
    await this.session.run(`UPDATE runs SET ${given.map(([column]) => `${column} = ?`).join(", ")} WHERE id = ?`, [
      ...given.map(([, value]) => value!),
      runId,
    ]);
  }

  async get(idOrPrefix: string): Promise<RunRecord | undefined> {
    const rows = await this.session.rows(`${this.#select("r.id = ? OR r.id LIKE ? ESCAPE '\\'")} ORDER BY r.id = ? DESC LIMIT 2`, [
      idOrPrefix,
      `${idOrPrefix.replace(/[\\%_]/g, "\\$&")}%`,
      idOrPrefix,
    ]);
    const exact = rows.find((row) => row[0] === idOrPrefix);
    return exact ? runOf(exact) : rows.length === 1 ? runOf(rows[0]!) : undefined;
  }

  async list(filter: RunFilter): Promise<RunRecord[]> {
    const clauses = ["true"];
    const params: SqlParam[] = [];
    if (filter.scope) {
      clauses.push("r.scope_id = ?");
      params.push(await this.session.scopeId(filter.scope));
    }
    if (filter.state) {
      clauses.push("r.state = ?");
      params.push(filter.state);
    }
    if (filter.since) {
      clauses.push("r.started_at >= ?");
      params.push(this.session.dialect.instant(filter.since));
    }
    const rows = await this.session.rows(
      `${this.#select(clauses.join(" AND "))} ORDER BY r.started_at DESC, ${this.session.dialect.runsAdded} DESC LIMIT ?`,
      [...params, filter.limit ?? this.session.dialect.noLimit],
    );
    return rows.map(runOf);
  }

  async copy(run: RunRecord): Promise<boolean> {
    const added = await this.session.run(
      `${INSERT_RUN} ON CONFLICT (id) DO NOTHING`,
      runValues(run, await this.session.scopeId(run.scope), run.lease),
    );
    return added > 0;
  }
}

const INSERT_RUN = `INSERT INTO runs (${RUN_INSERT_COLUMNS.join(", ")}) VALUES (${questionMarks(RUN_INSERT_COLUMNS.length)})`;
const HELD_BY = "lease_host = ? AND lease_pid = ? AND lease_nonce = ?";

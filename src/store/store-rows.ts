import { RESULT_VALUE_COLUMNS, rowValues, STORED_IDENTIFIER } from "./result-values.js";
import type {
  ColumnValue,
  Lease,
  LedgerRow,
  LedgerStats,
  NewRun,
  NewTask,
  RunPatch,
  RunRecord,
  Scope,
  TaskPatch,
  TaskRecord,
} from "./store.js";

/**
 * Records from the rows both engines select: the same columns in the same order (those of
 * run-store.ts, task-store.ts and ledger-store.ts), each value as text, a number or NULL (JSON
 * columns as their text, flags as 0 or 1, times as ISO 8601 strings).
 */

/** The columns a run is inserted with, in the order of runValues. */
export const RUN_INSERT_COLUMNS = [
  "id",
  "scope_id",
  "identity",
  "kind",
  "state",
  "started_at",
  "finished_at",
  "product",
  "country",
  "source",
  "settings",
  "prepared",
  "plan",
  "output",
  "host",
  "os_user",
  "lease_host",
  "lease_pid",
  "lease_nonce",
  "heartbeat_at",
  "note",
] as const;

/** A run's values for RUN_INSERT_COLUMNS: a new run with the lease of its creator, or a run copied from another store as it was. */
export function runValues(run: NewRun & { finishedAt?: string }, scopeId: number, lease: RunRecord["lease"]): ColumnValue[] {
  return [
    run.id,
    scopeId,
    run.identity,
    run.kind,
    run.state,
    run.startedAt,
    run.finishedAt ?? null,
    run.product,
    run.country ?? null,
    JSON.stringify(run.source),
    JSON.stringify(run.settings),
    json(run.prepared),
    json(run.plan),
    json(run.output),
    run.host ?? null,
    run.user ?? null,
    lease?.host ?? null,
    lease?.pid ?? null,
    lease?.nonce ?? null,
    lease?.heartbeatAt ?? null,
    run.note ?? null,
  ];
}

/** The columns a patch of a run sets, with their values (undefined: not in the patch). */
export function runPatchColumns(patch: RunPatch): Array<[string, ColumnValue | undefined]> {
  return [
    ["identity", patch.identity],
    ["state", patch.state],
    ["finished_at", patch.finishedAt],
    ["plan", patch.plan === undefined ? undefined : JSON.stringify(patch.plan)],
    ["output", patch.output === undefined ? undefined : JSON.stringify(patch.output)],
    ["source", patch.source === undefined ? undefined : JSON.stringify(patch.source)],
    ["prepared", patch.prepared === undefined ? undefined : JSON.stringify(patch.prepared)],
    ["note", patch.note],
  ];
}

/** The columns a new task is inserted with, in the order of taskValues. */
export const TASK_INSERT_COLUMNS = [
  "scope_id",
  "run_id",
  "part",
  "parts",
  "idempotency_key",
  "task_id",
  "product",
  "country",
  "count",
  "sha256",
  "submitted_at",
  "created_at",
  "status",
  "total",
  "success_cnt",
  "failure_cnt",
  "checked_at",
  "retry_of",
  "replayed",
  "recorded_at",
  "staged_file",
  "staged_bytes",
  "staged_sha256",
] as const;

/** A new task's values for TASK_INSERT_COLUMNS (a flag as 0 or 1). */
export function taskValues(task: NewTask, scopeId: number): ColumnValue[] {
  return [
    scopeId,
    task.runId ?? null,
    task.part ?? null,
    task.parts ?? null,
    task.idempotencyKey ?? null,
    task.taskId ?? null,
    task.product,
    task.country ?? null,
    task.count ?? null,
    task.sha256 ?? null,
    task.submittedAt ?? null,
    task.createdAt ?? null,
    task.status ?? null,
    task.total ?? null,
    task.successCnt ?? null,
    task.failureCnt ?? null,
    task.checkedAt ?? null,
    task.retryOf ?? null,
    task.replayed === undefined ? null : Number(task.replayed),
    task.recordedAt ?? null,
    task.staged?.file ?? null,
    task.staged?.bytes ?? null,
    task.staged?.sha256 ?? null,
  ];
}

/**
 * The columns a patch of a task sets outright, with their values (undefined: not in the
 * patch). `checked_at` is not among them: each store keeps the first one it is given.
 */
export function taskPatchColumns(patch: TaskPatch): Array<[string, ColumnValue | undefined]> {
  return [
    ["task_id", patch.taskId],
    ["created_at", patch.createdAt],
    ["status", patch.status],
    ["total", patch.total],
    ["success_cnt", patch.successCnt],
    ["failure_cnt", patch.failureCnt],
    ["replayed", patch.replayed === undefined ? undefined : Number(patch.replayed)],
    ["recorded_at", patch.recordedAt],
    ["country", patch.country],
    ["staged_file", patch.staged?.file],
    ["staged_bytes", patch.staged?.bytes],
    ["staged_sha256", patch.staged?.sha256],
  ];
}

/** A row of the per-product statistics: scope, product, results, distinct numbers, oldest and newest check. */
export function statsGroupOf([
  baseUrl,
  profile,
  product,
  count,
  distinct,
  first,
  last,
]: readonly ColumnValue[]): LedgerStats["groups"][number] {
  return {
    scope: { baseUrl: String(baseUrl), profile: String(profile) },
    product: String(product),
    results: Number(count),
    numbers: Number(distinct),
    oldest: String(first),
    newest: String(last),
  };
}

/** What a ledger row takes from its task: selected with each store's TASK_CONTEXT, read with taskContextOf. */
export interface TaskContext {
  scope: Scope;
  product: string;
  taskId: string | undefined;
  checkedAt: string;
  columns: readonly string[];
}

export function taskContextOf(row: readonly ColumnValue[], at: number): TaskContext {
  const [baseUrl, profile, product, taskId, checkedAt, columns] = row.slice(at, at + 6);
  return {
    scope: { baseUrl: String(baseUrl), profile: String(profile) },
    product: String(product),
    taskId: taskId === null ? undefined : String(taskId),
    checkedAt: String(checkedAt),
    columns: columns === null ? [] : (JSON.parse(String(columns)) as string[]),
  };
}

/** A result row selected as `identifier, <value columns>, extra` starting at `at`. */
export function ledgerRowOf(row: readonly ColumnValue[], at: number, task: TaskContext): LedgerRow {
  const identifier = String(row[at]);
  const stored = row.slice(at + 1, at + 1 + RESULT_VALUE_COLUMNS.length);
  const extra = row[at + 1 + RESULT_VALUE_COLUMNS.length];
  return {
    identifier: STORED_IDENTIFIER.test(identifier) ? identifier : String(Number(identifier)),
    product: task.product,
    scope: task.scope,
    ...(task.taskId === undefined ? {} : { taskId: task.taskId }),
    checkedAt: task.checkedAt,
    values: rowValues(task.columns, stored, extra === null ? undefined : String(extra)),
  };
}

export function json(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

export function parsed(value: ColumnValue | undefined): unknown {
  return value === null || value === undefined ? undefined : JSON.parse(String(value));
}

export function optional<T>(value: ColumnValue | undefined, as: (value: ColumnValue) => T): T | undefined {
  return value === null || value === undefined ? undefined : as(value);
}

export function leaseOf(host: ColumnValue | undefined, pid: ColumnValue | undefined, nonce: ColumnValue | undefined): Lease | undefined {
  return host === null || host === undefined ? undefined : { host: String(host), pid: Number(pid), nonce: String(nonce) };
}

export function sameLease(a: Lease, b: Lease): boolean {
  return a.host === b.host && a.pid === b.pid && a.nonce === b.nonce;
}

export function runOf(row: readonly ColumnValue[]): RunRecord {
  const [id, baseUrl, profile, identity, kind, state, startedAt, finishedAt, product, country, source, settings, prepared, plan, output] =
    row;
  const [host, user, leaseHost, leasePid, leaseNonce, heartbeatAt, note] = row.slice(15);
  const lease = leaseOf(leaseHost, leasePid, leaseNonce);
  return {
    id: String(id),
    scope: { baseUrl: String(baseUrl), profile: String(profile) },
    identity: String(identity),
    kind: String(kind) as RunRecord["kind"],
    state: String(state) as RunRecord["state"],
    startedAt: String(startedAt),
    ...optionalField("finishedAt", optional(finishedAt, String)),
    product: String(product),
    ...optionalField("country", optional(country, String)),
    source: parsed(source) as RunRecord["source"],
    settings: parsed(settings),
    ...optionalField("prepared", parsed(prepared)),
    ...optionalField("plan", parsed(plan)),
    ...optionalField("output", parsed(output)),
    ...optionalField("host", optional(host, String)),
    ...optionalField("user", optional(user, String)),
    ...optionalField("lease", lease && heartbeatAt !== null ? { ...lease, heartbeatAt: String(heartbeatAt) } : undefined),
    ...optionalField("note", optional(note, String)),
  };
}

export function taskOf(row: readonly ColumnValue[]): TaskRecord {
  const [ref, baseUrl, profile, runId, part, parts, key, taskId, product, country, count, sha256, submittedAt, createdAt] = row;
  const [status, total, successCnt, failureCnt, checkedAt, retryOf, replayed, recordedAt, stagedFile, stagedBytes, stagedSha256] =
    row.slice(14);
  return {
    ref: Number(ref),
    scope: { baseUrl: String(baseUrl), profile: String(profile) },
    ...optionalField("runId", optional(runId, String)),
    ...optionalField("part", optional(part, Number)),
    ...optionalField("parts", optional(parts, Number)),
    ...optionalField("idempotencyKey", optional(key, String)),
    ...optionalField("taskId", optional(taskId, String)),
    product: String(product),
    ...optionalField("country", optional(country, String)),
    ...optionalField("count", optional(count, Number)),
    ...optionalField("sha256", optional(sha256, String)),
    ...optionalField("submittedAt", optional(submittedAt, String)),
    ...optionalField("createdAt", optional(createdAt, String)),
    ...optionalField("status", optional(status, String)),
    ...optionalField("total", optional(total, Number)),
    ...optionalField("successCnt", optional(successCnt, Number)),
    ...optionalField("failureCnt", optional(failureCnt, Number)),
    ...optionalField("checkedAt", optional(checkedAt, String)),
    ...optionalField("retryOf", optional(retryOf, String)),
    ...optionalField(
      "replayed",
      optional(replayed, (value) => Number(value) === 1),
    ),
    ...optionalField("recordedAt", optional(recordedAt, String)),
    ...optionalField(
      "staged",
      stagedFile === null ? undefined : { file: String(stagedFile), bytes: Number(stagedBytes), sha256: String(stagedSha256) },
    ),
  };
}

/** `{ [name]: value }`, or nothing when the value is undefined (the records' optional fields are absent, never undefined). */
export function optionalField<K extends string, V>(name: K, value: V | undefined): { [key in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [key in K]?: V };
}

/**
 * What a task row forgets when a patch gives it another task id than it had (the part
 * uploaded again, the service having forgotten the first task): the first task's staged
 * result and the date its results were checked, unless the patch sets them itself.
 */
export function columnsOfAnotherTask(patch: TaskPatch): string[] {
  return [
    ...(patch.staged === undefined ? ["staged_file", "staged_bytes", "staged_sha256"] : []),
    ...(patch.checkedAt === undefined ? ["checked_at"] : []),
  ];
}

import { rowValues, STORED_IDENTIFIER } from "./result-values.js";
import { RESULT_VALUE_COLUMNS } from "./sqlite-schema.js";
import type { Lease, LedgerRow, RunRecord, Scope, TaskRecord } from "./store.js";

/**
 * Records from the rows both stores select: the same columns in the same order (RUN_COLUMNS,
 * TASK_COLUMNS, TASK_CONTEXT of each store), each value as text, a number or NULL (JSON
 * columns as their text, flags as 0 or 1, times as ISO 8601 strings).
 */

/** A value as a store's row holds it. */
export type ColumnValue = string | number | null | Buffer;

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

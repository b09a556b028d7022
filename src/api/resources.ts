/**
 * Checking the shape of `data` in a successful envelope. Lenient where the spec
 * allows variation (extra fields, the shorter task variant, a briefly absent
 * result_url), strict where a wrong value would mislead the CLI (an unknown task
 * status, a non-numeric count): those become a ResponseFormatError rather than a
 * task the caller would misread.
 */
import type { Balance, Task, TaskStatus } from "../spec/task.js";
import { RefusedTaskError, ResponseFormatError } from "./errors.js";
import { sanitizeSnippet } from "./redact.js";

const TASK_STATUSES: readonly TaskStatus[] = ["processing", "success", "failed"];

/** What a task id may be: it goes into URL paths, the journal, and commands printed for the user to run. */
export const TASK_ID = /^[A-Za-z0-9_-]{1,128}$/;

const OPTIONAL_COUNTS = [
  "submitted_lines",
  "invalid_cnt",
  "no_code_cnt",
  "other_country_cnt",
  "duplicate_cnt",
  "success_cnt",
  "failure_cnt",
] as const;

/** Where the data came from, for error messages. */
export interface ResourceContext {
  what: string; // e.g. "POST /api/v1/bulk-tasks"
  status: number;
  contentType: string | undefined;
  /** Removes secrets from server-supplied values quoted in messages. */
  scrub: (text: string) => string;
}

/** Judging a task's fields once its id is known to be well-formed: a refusal names the task (RefusedTaskError). */
interface TaskFieldContext extends ResourceContext {
  taskId?: string;
}

/**
 * A Task with only the fields the spec defines (unknown fields dropped). Required:
 * `id`, `status` (one of the three), `total`. `product`, `country` and
 * `created_at` read as "" when absent, since the service may leave them out for
 * some products; `null` optional fields read as absent. A `created_at` that is there
 * must be an ISO 8601 timestamp: it is shown, stored and compared as one. A field refused
 * once the id is well-formed is a RefusedTaskError naming that id.
 */
export function toTask(data: unknown, ctx: ResourceContext): Task {
  const record = asRecord(data, "a task", ctx);
  const id = record.id;
  if (typeof id !== "string" || id === "") fail(ctx, "a task without an id");
  if (!TASK_ID.test(id)) {
    // Never echoed as sent: it could carry terminal escapes, and it reaches "Next:" hints and the journal.
    throw new ResponseFormatError(
      `Refused the answer to ${ctx.what}: the service returned a malformed task id (${JSON.stringify(sanitizeSnippet(id, 40))}; ids are 1 to 128 letters, digits, "_" or "-"). Nothing was printed or recorded for it.`,
      ctx.status,
      ctx.contentType,
    );
  }
  // From here on the answer names a task the service may hold: every refusal carries its id.
  const fields: TaskFieldContext = { ...ctx, taskId: id };
  const status = record.status;
  if (typeof status !== "string" || !(TASK_STATUSES as readonly string[]).includes(status)) {
    const shown = typeof status === "string" ? `"${sanitizeSnippet(fields.scrub(status), 40)}"` : String(status);
    fail(fields, `a task with status ${shown} (expected processing, success or failed)`);
  }
  const task: Task = {
    id,
    product: optionalString(record, "product", fields) ?? "",
    status: status as TaskStatus,
    country: optionalString(record, "country", fields) ?? "",
    total: requiredCount(record, "total", fields),
    created_at: optionalTimestamp(record, "created_at", fields) ?? "",
  };
  for (const name of OPTIONAL_COUNTS) {
    const value = optionalCount(record, name, fields);
    if (value !== undefined) task[name] = value;
  }
  const preparing = record.preparing;
  if (typeof preparing === "boolean") task.preparing = preparing;
  else if (preparing !== undefined && preparing !== null) fail(fields, "a task whose preparing is not true or false");
  const resultUrl = optionalString(record, "result_url", fields);
  if (resultUrl !== undefined && resultUrl !== "") task.result_url = resultUrl;
  return task;
}

/** A Balance; `balance_micros` must be an integer (it may be negative on an overdrawn account). */
export function toBalance(data: unknown, ctx: ResourceContext): Balance {
  const record = asRecord(data, "a balance", ctx);
  const micros = record.balance_micros;
  if (typeof micros !== "number" || !Number.isInteger(micros)) fail(ctx, "a balance without an integer balance_micros");
  return { balance_micros: micros };
}

function asRecord(data: unknown, what: string, ctx: ResourceContext): Record<string, unknown> {
  if (typeof data !== "object" || data === null || Array.isArray(data)) fail(ctx, `no object where ${what} was expected`);
  return data as Record<string, unknown>;
}

function optionalString(record: Record<string, unknown>, name: string, ctx: TaskFieldContext): string | undefined {
  const value = record[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") fail(ctx, `a task whose ${name} is not a string`);
  return value;
}

/** `2025-01-15T09:00:00Z`, with seconds, fractions and an offset or not. */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

function optionalTimestamp(record: Record<string, unknown>, name: string, ctx: TaskFieldContext): string | undefined {
  const value = optionalString(record, name, ctx);
  if (value === undefined || value === "" || (ISO_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value)))) return value;
  // Quoted cut short and on one line: it may hold terminal escapes.
  fail(ctx, `a task whose ${name} is not an ISO 8601 timestamp ("${sanitizeSnippet(ctx.scrub(value), 40)}")`);
}

function optionalCount(record: Record<string, unknown>, name: string, ctx: TaskFieldContext): number | undefined {
  const value = record[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) fail(ctx, `a task whose ${name} is not a count`);
  return value;
}

function requiredCount(record: Record<string, unknown>, name: string, ctx: TaskFieldContext): number {
  const value = optionalCount(record, name, ctx);
  if (value === undefined) fail(ctx, `a task without ${name}`);
  return value;
}

function fail(ctx: TaskFieldContext, what: string): never {
  const message = `The service answered ${ctx.what} with ${what}. Check that --base-url points at the bulk-checking service, or upgrade bulkcheck.`;
  if (ctx.taskId !== undefined) throw new RefusedTaskError(message, ctx.status, ctx.contentType, ctx.taskId, what);
  throw new ResponseFormatError(message, ctx.status, ctx.contentType);
}

import { BulkcheckError } from "../errors.js";
import type { PreparationSettings } from "../prepare/settings.js";
import { ROW_COUNTS, type PrepareSummary } from "../prepare/summary.js";
import { RunRecordError } from "../store/health.js";
import type { RunRecord, Scope, Store, TaskRecord } from "../store/store.js";

/** Where a task came from, as far as this machine's store knows: its row, and the run it was part of. */
export interface TaskOrigin {
  taskId: string;
  task: TaskRecord;
  run: RunRecord | undefined;
}

/** The store's knowledge of these tasks, by id; a task the store does not know is left out. */
export async function taskOrigins(store: Store, scope: Scope, ids: readonly string[]): Promise<Map<string, TaskOrigin>> {
  const origins = new Map<string, TaskOrigin>();
  const runs = new Map<string, RunRecord | undefined>();
  for (const id of ids) {
    const task = await store.tasks.byId(scope, id);
    if (!task) continue;
    let run: RunRecord | undefined;
    if (task.runId !== undefined) {
      if (!runs.has(task.runId)) runs.set(task.runId, await store.runs.get(task.runId));
      run = runs.get(task.runId);
    }
    origins.set(id, { taskId: id, task, run });
  }
  return origins;
}

/**
 * How a run's list was read, when it was recorded (runs imported from 0.1 without it have none).
 * Settings that are not what bulkcheck writes are refused (RunRecordError), never read as if they were.
 */
export function runSettings(run: RunRecord | undefined): PreparationSettings | undefined {
  const settings = run?.settings;
  if (!run || settings === undefined || settings === null) return undefined;
  if (!isRecord(settings)) throw new RunRecordError(run.id, "settings", "they are not an object");
  // A journal of 0.1 recorded no version: those settings are not taken as this release's.
  if (settings.version === undefined) return undefined;
  if (settings.version !== 1) throw new RunRecordError(run.id, "settings", `their version is ${JSON.stringify(settings.version)}, not 1`);
  const column = settings.column;
  if (!isRecord(column) || !Number.isInteger(column.index))
    throw new RunRecordError(run.id, "settings", "their column is not a column index");
  if (typeof settings.encoding !== "string") {
    throw new RunRecordError(run.id, "settings", "their encoding is missing");
  }
  for (const flag of ["requireCountryCode", "strictRegion", "hasHeader"]) {
    if (typeof settings[flag] !== "boolean") throw new RunRecordError(run.id, "settings", `their ${flag} is not true or false`);
  }
  return settings as unknown as PreparationSettings;
}

/** The preparation summary of a run's whole list, when it was recorded; one that is not what bulkcheck writes is refused (RunRecordError). */
export function runSummary(run: RunRecord | undefined): PrepareSummary | undefined {
  const summary = run?.prepared;
  if (!run || summary === undefined || summary === null) return undefined;
  if (!isRecord(summary)) throw new RunRecordError(run.id, "preparation summary", "it is not an object");
  const notCount = ROW_COUNTS.find((field) => !Number.isInteger(summary[field]));
  if (notCount) throw new RunRecordError(run.id, "preparation summary", `its ${notCount} is not a count`);
  return summary as unknown as PrepareSummary;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The summaries of the runs these tasks came from, each run once (a split list's parts share one). */
export function runSummaries(origins: Iterable<TaskOrigin>): PrepareSummary[] {
  const byRun = new Map<string, PrepareSummary>();
  for (const { run } of origins) {
    const summary = runSummary(run);
    if (run && summary) byRun.set(run.id, summary);
  }
  return [...byRun.values()];
}

/** Retries of retries deeper than this are a store gone wrong, not a list worth another try. */
const MAX_RETRY_DEPTH = 100;

/**
 * A task and the tasks it retried, newest first, from the store's `retryOf` links. The
 * walk is bounded: a link back into the chain (a task recorded as a retry of itself, as
 * older versions could write) or a chain over MAX_RETRY_DEPTH retries is an error (exit
 * 1), never an endless rebuild.
 */
export async function retryLineage(store: Store, scope: Scope, taskId: string): Promise<string[]> {
  const lineage = [taskId];
  for (
    let parent = (await store.tasks.byId(scope, taskId))?.retryOf;
    parent !== undefined;
    parent = (await store.tasks.byId(scope, parent))?.retryOf
  ) {
    if (lineage.includes(parent)) {
      throw new BulkcheckError(
        "unexpected",
        `The store records task ${lineage.at(-1)} as a retry of ${parent}, which goes round in a circle (${[...lineage, parent].join(" → ")}), so the numbers it was given cannot be worked out.`,
        { hint: "Retry the list's first task instead, or submit the list again." },
      );
    }
    if (lineage.length > MAX_RETRY_DEPTH) {
      throw new BulkcheckError(
        "unexpected",
        `Task ${taskId} is more than ${MAX_RETRY_DEPTH} retries deep in the store; no retry is made.`,
        {
          hint: "These numbers keep getting no result: check them another way, or submit the list again.",
        },
      );
    }
    lineage.push(parent);
  }
  return lineage;
}

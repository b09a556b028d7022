import { join } from "node:path";
import type { ApiClient } from "../api/types.js";
import { InputRejectedError, PendingError, UsageError } from "../errors.js";
import type { Journal, JournalRecord } from "../journal/journal.js";
import { prepareList, type PrepareResult } from "../prepare/index.js";
import type { PreparationSettings } from "../prepare/settings.js";
import { readResults } from "../results/read-results.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { openTaskResult } from "./fetch-result.js";
import { matches, writeSlice, writeWithoutResults } from "./retry-list.js";
import type { Chunk } from "./submit.js";

export interface UploadedListDeps {
  client: Pick<ApiClient, "checkTask" | "openResult">;
  journal: Pick<Journal, "findByTaskId">;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  /** The source was prepared again (the CLI says which column it read). */
  onPrepared?: (result: PrepareResult) => void;
}

export interface TaskOrigin {
  record: JournalRecord;
  settings: PreparationSettings;
  sourcePath: string;
  product: ServiceType;
}

export interface RetryList {
  origin: TaskOrigin;
  /** How many numbers the task was given. */
  uploadedCount: number;
  /** Those of them without a result, written to the directory given. */
  retry: Chunk;
}

/**
 * The numbers of a finished task that got no result (all of them for a failed
 * task), written into `dir`. The task's list is rebuilt from the source and
 * checked against the hash of what was uploaded, so a changed source is refused
 * rather than half-matched; a retry of a retry works the same way.
 */
export async function retryList(deps: UploadedListDeps, taskId: string, dir: string): Promise<RetryList> {
  const task = await deps.client.checkTask(taskId);
  if (task.status === "processing") {
    throw new PendingError(`Task ${taskId} is still processing.`, [taskId], { hint: `Wait for it first: bulkcheck wait ${taskId}` });
  }
  const origin = await taskOrigin(deps.journal, task);
  const uploaded = await rebuildUploadedList(deps, taskId, origin, dir);
  const retry = await writeWithoutResults(uploaded.path, resultRows(deps, task, origin.product), join(dir, "retry.txt"));
  return { origin, uploadedCount: uploaded.count, retry };
}

/** What the journal knows about how a task was made; rebuilding its list needs all of it. */
async function taskOrigin(journal: Pick<Journal, "findByTaskId">, task: Task): Promise<TaskOrigin> {
  const product = canonicalServiceType(task.product);
  const record = await journal.findByTaskId(task.id);
  const settings = record?.submit.preparation;
  if (!product || !record || !settings || !record.submit.source.path) {
    throw new UsageError(`There is no local record of the list task ${task.id} was submitted from.`, {
      hint: "retry-failed works on tasks submitted from a file on this machine (see bulkcheck status).",
    });
  }
  return { record, settings, sourcePath: record.submit.source.path, product };
}

/**
 * Rebuilds the exact list a task was given, into `dir`: its part of the source,
 * prepared again with the journalled settings, or — for a task made by
 * retry-failed — its parent's list without the parent's results. The hash must
 * equal what was uploaded; otherwise the source (or a parent's result) changed.
 */
async function rebuildUploadedList(deps: UploadedListDeps, taskId: string, origin: TaskOrigin, dir: string): Promise<Chunk> {
  const { record, settings, sourcePath } = origin;
  const target = join(dir, `${taskId}.txt`);
  let rebuilt: Chunk | "changed";
  if (record.submit.retry_of) {
    const parentId = record.submit.retry_of;
    const parent = await deps.client.checkTask(parentId);
    const parentList = await rebuildUploadedList(deps, parentId, await taskOrigin(deps.journal, parent), dir);
    const written = await writeWithoutResults(parentList.path, resultRows(deps, parent, origin.product), target);
    rebuilt = matches(written, record.submit.chunk) ? written : "changed";
  } else {
    const prepared = await prepareList({
      source: sourcePath,
      ...(settings.country ? { country: settings.country } : {}),
      column: String(settings.column.index + 1),
      requireCountryCode: settings.requireCountryCode,
      strictRegion: settings.strictRegion,
      digitsAs: settings.digitsAs ?? "international",
      encoding: settings.encoding,
      ...(settings.sheet === undefined ? {} : { sheet: settings.sheet }),
      outputDir: join(dir, `${taskId}-source`),
    });
    deps.onPrepared?.(prepared);
    rebuilt = await writeSlice(prepared.chunks[0]!.path, record.submit.chunk, target);
  }
  if (rebuilt === "changed") {
    throw new InputRejectedError(`${sourcePath} has changed since task ${taskId} was submitted, so its numbers cannot be recomputed.`, {
      hint: "Restore the original file, or submit the new one with bulkcheck submit.",
    });
  }
  return rebuilt;
}

/** A finished task's result rows; nothing for a failed task (none of its numbers has a result). */
function resultRows(deps: UploadedListDeps, task: Task, product: ServiceType): AsyncIterable<readonly string[]> | undefined {
  if (task.status !== "success") return undefined;
  const open = () => openTaskResult(task.id, { client: deps.client, sleep: deps.sleep, signal: deps.signal });
  return readResults([{ label: `task ${task.id}`, open }], { serviceType: product, signal: deps.signal });
}

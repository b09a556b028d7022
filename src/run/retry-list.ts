import { readAgainOptions } from "../prepare/settings.js";
import { join } from "node:path";
import type { ApiClient } from "../api/types.js";
import { InputRejectedError, UsageError } from "../errors.js";
import { prepareList, type PrepareResult } from "../prepare/index.js";
import type { PreparationSettings } from "../prepare/settings.js";
import { readResults } from "../results/read-results.js";
import { uploadedIdentifiers } from "../results/result-rules.js";
import { retryLineage, runSettings, taskOrigins, type TaskOrigin as StoredOrigin } from "../tasks/origins.js";
import { rebuildRun } from "./rebuild.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { Scope, Store, TaskRecord } from "../store/store.js";
import { resultLabel } from "../tasks/download.js";
import { openTaskResult, stillProcessing } from "../tasks/fetch-result.js";
import { matches, writeSlice, writeWithoutResults, type ChunkRecord } from "../tasks/list-slice.js";
import type { Chunk } from "../tasks/submit.js";

export interface RetryListDeps {
  client: Pick<ApiClient, "checkTask" | "openResult">;
  store: Store;
  scope: Scope;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  /** The source was prepared again (the CLI says which column it read). */
  onPrepared?: (result: PrepareResult) => void;
}

/** What the store knows of the first task of a lineage: rebuilding its list needs all of it. */
export interface TaskOrigin {
  stored: StoredOrigin;
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
  /**
   * The task and the tasks it retried, newest first: every number in `retry`
   * went without a result in each of them.
   */
  lineage: string[];
}

/**
 * The numbers of a finished task that got no result (all of them for a failed
 * task), written into `dir`. The task's list is rebuilt from the source and
 * checked against the hash of what was uploaded, so a changed source is refused
 * rather than half-matched; a retry of a retry works the same way, one step per
 * task of its (bounded) lineage.
 */
export async function retryList(deps: RetryListDeps, taskId: string, dir: string): Promise<RetryList> {
  const task = await deps.client.checkTask(taskId);
  if (task.status === "processing") throw stillProcessing(taskId);
  const lineage = await retryLineage(deps.store, deps.scope, taskId);
  const origins = await taskOrigins(deps.store, deps.scope, lineage);
  const origin = taskOrigin(origins.get(lineage.at(-1)!), lineage.at(-1)!, task.product);
  const uploaded = await rebuildUploadedList(deps, origins, lineage, origin, dir);
  const retry = await writeWithoutResults(
    uploaded.path,
    await resultRows(deps, task, origin.product, uploaded.path),
    join(dir, "retry.txt"),
  );
  return { origin, uploadedCount: uploaded.count, retry, lineage };
}

/** What the store knows about how the first task of a lineage was made; rebuilding its list needs all of it. */
function taskOrigin(stored: StoredOrigin | undefined, rootId: string, product: string): TaskOrigin {
  const canonical = canonicalServiceType(product);
  const settings = runSettings(stored?.run);
  const sourcePath = stored?.run?.source.path;
  if (!canonical || !stored || !settings || !sourcePath) {
    throw new UsageError(`There is no local record of the list task ${rootId} was submitted from.`, {
      hint: "retry-failed works on tasks submitted from a file on this machine (see bulkcheck status).",
    });
  }
  return { stored, settings, sourcePath, product: canonical };
}

/**
 * Rebuilds the exact list the newest task of `lineage` was given, into `dir`:
 * the first task's part of the source, prepared again with the journalled
 * settings, then for each retry after it the list before without that task's
 * results. Each step's hash must equal what was uploaded; otherwise the source
 * (or a result) changed.
 */
async function rebuildUploadedList(
  deps: RetryListDeps,
  origins: ReadonlyMap<string, StoredOrigin>,
  lineage: readonly string[],
  origin: TaskOrigin,
  dir: string,
): Promise<Chunk> {
  const rootId = lineage.at(-1)!;
  let list = await rootPart(deps, origin, rootId, dir);
  for (let step = lineage.length - 2; step >= 0; step--) {
    const [id, parentId] = [lineage[step]!, lineage[step + 1]!];
    const parent = await deps.client.checkTask(parentId);
    const written = await writeWithoutResults(list.path, await resultRows(deps, parent, origin.product, list.path), join(dir, `${id}.txt`));
    if (!matches(written, chunkOf(origins.get(id)!.task))) throw changedSince(origin.sourcePath, id);
    list = written;
  }
  return list;
}

/** A task's part as its row records it: its place in the run, its count and its hash. */
function chunkOf(task: TaskRecord): ChunkRecord {
  return { index: task.part ?? 0, of: task.parts ?? 1, count: task.count ?? 0, sha256: task.sha256 ?? "" };
}

/**
 * The numbers the lineage's first task was given: its run's part, made again as the run
 * planned it (see rebuildRun); for a run of 0.1, which planned nothing, its slice of the
 * list prepared again.
 */
async function rootPart(deps: RetryListDeps, origin: TaskOrigin, rootId: string, dir: string): Promise<Chunk> {
  const { stored, sourcePath } = origin;
  const chunk = chunkOf(stored.task);
  const rebuilt = await rebuildRun(stored.run!, sourcePath, {
    store: deps.store,
    scope: deps.scope,
    dir: join(dir, `${rootId}-source`),
    signal: deps.signal,
    ...(deps.onPrepared ? { onPrepared: deps.onPrepared } : {}),
  });
  if (rebuilt) {
    const part = rebuilt.planned.files[chunk.index];
    if (!rebuilt.unchanged || !part || !matches(part, chunk)) throw changedSince(sourcePath, rootId);
    return part;
  }
  const list = await legacySlice(deps, origin, chunk, join(dir, rootId));
  if (list === "changed") throw changedSince(sourcePath, rootId);
  return list;
}

/** A task of 0.1's: its part of the list prepared again, a slice of it (or its country's part). */
async function legacySlice(deps: RetryListDeps, origin: TaskOrigin, chunk: ChunkRecord, dir: string): Promise<Chunk | "changed"> {
  const { settings, sourcePath } = origin;
  const { countryGroups } = settings;
  const prepared = await prepareList({
    source: sourcePath,
    ...readAgainOptions(settings),
    ...(settings.anyRegion ? { anyRegion: true } : {}),
    ...(countryGroups ? { countryTasks: { minTaskSize: countryGroups.minTaskSize, maxTaskSize: countryGroups.maxTaskSize } } : {}),
    outputDir: join(dir, "source"),
    signal: deps.signal,
  });
  deps.onPrepared?.(prepared);
  // Grouped by country (--country auto), the task's part is one of the grouping's parts, by its place in the run.
  return countryGroups ? countryPart(prepared.chunks, chunk) : writeSlice(prepared.chunks[0]!.path, chunk, join(dir, "part.txt"));
}

function countryPart(parts: readonly Chunk[], chunk: ChunkRecord): Chunk | "changed" {
  const part = parts[chunk.index];
  return part !== undefined && parts.length === chunk.of && matches(part, chunk) ? part : "changed";
}

function changedSince(sourcePath: string, taskId: string): InputRejectedError {
  return new InputRejectedError(`${sourcePath} has changed since task ${taskId} was submitted, so its numbers cannot be recomputed.`, {
    hint: "Restore the original file, or submit the new one with bulkcheck submit.",
  });
}

/**
 * A finished task's result rows; nothing for a failed task (none of its numbers has a
 * result). The task's list is known here (`listPath`, rebuilt and checked against the
 * upload's hash), so every row must be one of its numbers.
 */
async function resultRows(
  deps: RetryListDeps,
  task: Task,
  product: ServiceType,
  listPath: string,
): Promise<AsyncIterable<readonly string[]> | undefined> {
  if (task.status !== "success") return undefined;
  const open = () => openTaskResult(task.id, { client: deps.client, sleep: deps.sleep, signal: deps.signal });
  const uploaded = await uploadedIdentifiers(listPath);
  return readResults([{ label: resultLabel(task.id), open, task, uploaded }], { serviceType: product, signal: deps.signal });
}

import { join } from "node:path";
import { InputRejectedError, UsageError } from "../errors.js";
import type { PreparationSettings } from "../prepare/settings.js";
import { readResults } from "../results/read-results.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { openTaskResult } from "../tasks/fetch-result.js";
import { matches, writeSlice, writeWithoutResults } from "../tasks/retry-list.js";
import type { Chunk } from "../tasks/submit.js";
import type { JournalRecord } from "../journal/journal.js";
import type { Context } from "./context.js";
import { prepareFromFlags } from "./preparation.js";

export interface TaskOrigin {
  record: JournalRecord;
  settings: PreparationSettings;
  sourcePath: string;
  product: ServiceType;
}

/** What the journal knows about how a task was made; retry-failed needs all of it. */
export async function taskOrigin(ctx: Context, task: Task): Promise<TaskOrigin> {
  const product = canonicalServiceType(task.product);
  const record = await (await ctx.journal()).findByTaskId(task.id);
  const settings = record?.submit.preparation as PreparationSettings | undefined;
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
export async function rebuildUploadedList(ctx: Context, taskId: string, origin: TaskOrigin, dir: string): Promise<Chunk> {
  const { record, settings, sourcePath } = origin;
  const target = join(dir, `${taskId}.txt`);
  let rebuilt: Chunk | "changed";
  if (record.submit.retry_of) {
    const parentId = record.submit.retry_of;
    const parent = await (await ctx.client()).checkTask(parentId);
    const parentList = await rebuildUploadedList(ctx, parentId, await taskOrigin(ctx, parent), dir);
    const written = await writeWithoutResults(parentList.path, resultRows(ctx, parent, origin.product), target);
    rebuilt = matches(written, record.submit.chunk) ? written : "changed";
  } else {
    const prepared = await prepareFromFlags(
      ctx,
      sourcePath,
      { column: String(settings.column.index + 1), requireCountryCode: settings.requireCountryCode, strictRegion: settings.strictRegion },
      settings.country,
      { outputDir: join(dir, `${taskId}-source`) },
    );
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
export function resultRows(ctx: Context, task: Task, product: ServiceType): AsyncIterable<readonly string[]> | undefined {
  if (task.status !== "success") return undefined;
  return (async function* () {
    const client = await ctx.client();
    yield* readResults([{ label: `task ${task.id}`, open: () => openTaskResult(task.id, { client, sleep: ctx.sleep, signal: ctx.signal }) }], {
      serviceType: product,
      signal: ctx.signal,
    });
  })();
}

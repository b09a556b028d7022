import { join } from "node:path";
import { PendingError } from "../../errors.js";
import { writeWithoutResults } from "../../tasks/retry-list.js";
import type { Context } from "../context.js";
import { submitPrepared, type SubmitFlags } from "../submit-flow.js";
import { withTempDir } from "../temp-dir.js";
import { rebuildUploadedList, resultRows, taskOrigin } from "../uploaded-list.js";
import { afterUpload, checkOutputFlags, type AfterUploadFlags } from "./submit.js";
import { pollInterval } from "./wait.js";

export type RetryFailedFlags = SubmitFlags & AfterUploadFlags;

/**
 * Submits a new task with the numbers of a finished task that got no result
 * (all of them for a failed task). The task's list is rebuilt from the source
 * and checked against the hash of what was uploaded, so a changed source is
 * refused rather than half-matched; a retry of a retry works the same way.
 */
export async function retryFailedCommand(ctx: Context, id: string, flags: RetryFailedFlags): Promise<void> {
  checkOutputFlags(ctx, flags);
  if (flags.wait) await pollInterval(ctx, flags.interval);
  const task = await (await ctx.client()).checkTask(id);
  if (task.status === "processing") {
    throw new PendingError(`Task ${id} is still processing.`, [id], { hint: `Wait for it first: bulkcheck wait ${id}` });
  }
  const origin = await taskOrigin(ctx, task);
  const uploaded = await withTempDir(async (dir) => {
    const list = await rebuildUploadedList(ctx, id, origin, dir);
    const retry = await writeWithoutResults(list.path, resultRows(ctx, task, origin.product), join(dir, "retry.txt"));
    ctx.printer.note(`${retry.count} of ${list.count} numbers of task ${id} got no result.`);
    if (retry.count === 0) return undefined;
    return submitPrepared(
      ctx,
      {
        product: origin.product,
        country: origin.settings.country,
        chunks: [retry],
        entry: { source: { path: origin.sourcePath }, preparation: origin.settings, retry_of: id },
      },
      flags,
    );
  });
  if (uploaded) await afterUpload(ctx, uploaded.map((result) => result.task.id), flags);
}

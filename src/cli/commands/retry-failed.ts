import { InputRejectedError, PendingError, UsageError } from "../../errors.js";
import type { PreparationSettings } from "../../prepare/settings.js";
import { readResults } from "../../results/read-results.js";
import { canonicalServiceType } from "../../spec/products.js";
import { openTaskResult } from "../../tasks/fetch-result.js";
import { unresolvedNumbers } from "../../tasks/retry-list.js";
import type { Context } from "../context.js";
import { prepareFromFlags } from "../preparation.js";
import { submitPrepared, type SubmitFlags } from "../submit-flow.js";
import { withTempDir } from "../temp-dir.js";
import { afterUpload, checkOutputFlags, type AfterUploadFlags } from "./submit.js";
import { pollInterval } from "./wait.js";

export type RetryFailedFlags = SubmitFlags & AfterUploadFlags;

/**
 * Submits a new task with the numbers of a finished task that got no result
 * (all of them for a failed task). The numbers are recomputed from the source
 * with the journalled preparation settings and checked against the hash of what
 * was uploaded, so a changed source is refused rather than half-matched.
 */
export async function retryFailedCommand(ctx: Context, id: string, flags: RetryFailedFlags): Promise<void> {
  checkOutputFlags(ctx, flags);
  if (flags.wait) await pollInterval(ctx, flags.interval);
  const client = await ctx.client();
  const task = await client.checkTask(id);
  if (task.status === "processing") {
    throw new PendingError(`Task ${id} is still processing.`, [id], { hint: `Wait for it first: bulkcheck wait ${id}` });
  }
  const product = canonicalServiceType(task.product);
  const record = await (await ctx.journal()).findByTaskId(id);
  const settings = record?.submit.preparation as PreparationSettings | undefined;
  if (!product || !record || !settings || !record.submit.source.path) {
    throw new UsageError(`There is no local record of the list task ${id} was submitted from.`, {
      hint: "retry-failed works on tasks submitted from a file on this machine (see bulkcheck status).",
    });
  }
  const sourcePath = record.submit.source.path;
  const uploaded = await withTempDir(async (dir) => {
    const prepared = await prepareFromFlags(
      ctx,
      sourcePath,
      { ...(settings.country ? { country: settings.country } : {}), column: String(settings.column.index + 1), requireCountryCode: settings.requireCountryCode, strictRegion: settings.strictRegion },
      settings.country,
      { outputDir: dir },
    );
    const results =
      task.status === "success"
        ? readResults([{ label: `task ${id}`, open: () => openTaskResult(id, { client, sleep: ctx.sleep, signal: ctx.signal }) }], { serviceType: product, signal: ctx.signal })
        : undefined;
    const retry = await unresolvedNumbers({ uploadList: prepared.chunks[0]!.path, chunk: record.submit.chunk, results, outputPath: `${dir}/retry.txt` });
    if (retry === "source-changed") {
      throw new InputRejectedError(`${sourcePath} has changed since task ${id} was submitted, so its numbers cannot be recomputed.`, {
        hint: "Restore the original file, or submit the new one with bulkcheck submit.",
      });
    }
    ctx.printer.note(`${retry.count} of ${record.submit.chunk.count} numbers of task ${id} got no result.`);
    if (retry.count === 0) return undefined;
    return submitPrepared(ctx, { product, country: settings.country, chunks: [retry], entry: { source: { path: sourcePath }, preparation: settings } }, flags);
  });
  if (uploaded) await afterUpload(ctx, uploaded.map((result) => result.task.id), flags);
}

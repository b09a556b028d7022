import { join } from "node:path";
import type { ApiClient } from "../../api/types.js";
import type { UploadedListDeps } from "../../tasks/uploaded-list.js";
import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { readIds } from "../read-ids.js";
import { withTempDir } from "../temp-dir.js";
import { afterUpload, checkOutputFlags, type AfterUploadFlags } from "./shared/after-upload.js";
import { checkOutputs } from "./shared/destination.js";
import { addReserveAndWaitOptions, examples } from "./shared/help.js";
import type { SubmitFlags } from "./shared/submission.js";
import { pollInterval } from "./shared/waiting.js";
import { count } from "../../format-count.js";

export interface RetryFailedOptions extends SubmitFlags, AfterUploadFlags {}

/** `bulkcheck retry-failed <id>`. Tests pass their own `run` to see what the flags parse into. */
export function retryFailedCommand(invoke: Invoke, run = retryFailedRun) {
  const command = new Command("retry-failed")
    .description("submit a new task with the numbers of a task that got no result")
    .argument("<ids...>", "task ids (one retry each), or - to read them from stdin")
    .option("--resubmit", "force a new task even if these numbers were already retried")
    .option("--dry-run", "show what would be submitted");
  return addReserveAndWaitOptions(command)
    .addHelpText("after", examples(["bulkcheck retry-failed $ID --yes", "bulkcheck retry-failed $ID --wait -o retried.csv"]))
    .action((ids, options, cmd) => invoke(cmd, (ctx) => run(ctx, ids, options)));
}

/**
 * Submits a new task with the numbers of a finished task that got no result
 * (all of them for a failed task), rebuilt from the source it was submitted from;
 * for several tasks (the parts of a split list), one retry each.
 */
export async function retryFailedRun(ctx: Context, ids: string[], options: RetryFailedOptions): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  await checkOutputFlags(ctx, options);
  if (options.wait) await pollInterval(ctx, options.interval);
  const client = await ctx.client();
  const created = await withTempDir(async (dir) => {
    const taskIdsCreated: string[] = [];
    for (const id of taskIds) {
      const uploaded = await retryOne(ctx, { client, id, dir: join(dir, id) }, options);
      taskIdsCreated.push(...(uploaded ?? []).map((result) => result.task.id));
    }
    return taskIdsCreated;
  });
  if (created.length > 0) await afterUpload(ctx, created, options);
}

async function retryOne(ctx: Context, task: { client: ApiClient; id: string; dir: string }, options: RetryFailedOptions) {
  // Loaded when the run starts, not with the command tree: rebuilding the task's list
  // prepares the source again (libphonenumber-js), and submitting derives keys (node:crypto).
  const { retryList } = await import("../../tasks/uploaded-list.js");
  const { noteColumn } = await import("./shared/preparation.js");
  const { submitAndReport } = await import("./shared/submission.js");
  const deps: UploadedListDeps = {
    client: task.client,
    journal: await ctx.journal(),
    sleep: ctx.sleep,
    signal: ctx.signal,
    onPrepared: (result) => noteColumn(ctx, result),
  };
  const { origin, uploadedCount, retry, lineage } = await retryList(deps, task.id, task.dir);
  // The list the retry was rebuilt from is known only now: the output may not be it, and nothing is uploaded yet.
  await checkOutputs(ctx, { "-o": options.output }, { force: options.force, reading: [origin.sourcePath] });
  ctx.printer.note(`${count(retry.count)} of ${count(uploadedCount)} numbers of task ${task.id} got no result.`);
  if (retry.count === 0) return undefined;
  if (lineage.length > 1) {
    ctx.printer.note(
      `Already retried: these ${count(retry.count)} numbers got no result in ${count(lineage.length)} tasks in a row (${lineage.join(", ")}); the service may not be able to check them, so this retry may get no result either.`,
    );
  }
  return submitAndReport(
    ctx,
    {
      product: origin.product,
      // Under --country auto each task has its own country; the settings' is the one national numbers were read in.
      country: origin.settings.anyRegion ? origin.record.submit.country : origin.settings.country,
      chunks: [retry],
      entry: { source: origin.record.submit.source, preparation: origin.settings, retry_of: task.id },
    },
    options,
  );
}

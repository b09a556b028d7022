import { join } from "node:path";
import type { RunOutcome } from "../../run/submit-request.js";
import type { Context } from "../context.js";
import { readIds } from "../read-ids.js";
import { withTempDir } from "../../temp-dir.js";
import { afterUpload, checkOutputFlags, outputsRequest, type AfterUploadFlags } from "./shared/after-upload.js";
import { checkOutputs } from "./shared/destination.js";
import type { SubmitFlags } from "./shared/submission.js";
import { pollInterval } from "./shared/waiting.js";
import { count } from "../../format-count.js";
import { finishRun, submitRun } from "../../run/submit-run.js";
import { retryList, type RetryListDeps } from "../../run/retry-list.js";
import { noteColumn } from "../views/preparation-view.js";
import { runDeps, runFlagsRequest } from "./shared/submission.js";
import { runPrinter } from "../views/run-printer.js";
import { emptySummary } from "../../prepare/summary.js";

export interface RetryFailedOptions extends SubmitFlags, AfterUploadFlags {}

/**
 * Submits a new task with the numbers of a finished task that got no result (all of
 * them for a failed task), rebuilt from the source it was submitted from; for several
 * tasks (the parts of a split list), one retry each. Each retry is a run of its own
 * (its identity is the task it retries): killed, it is carried on by the same command.
 */
export async function retryFailedAction(ctx: Context, ids: string[], options: RetryFailedOptions): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  await checkOutputFlags(ctx, options);
  const outputs = outputsRequest(ctx, options, { ledger: options.ledger !== false });
  const pollIntervalMs = await pollInterval(ctx, options.interval);
  const outcomes = await withTempDir(async (dir) => {
    const done: RunOutcome[] = [];
    for (const id of taskIds) {
      const outcome = await retryOne(ctx, id, join(dir, id), options, pollIntervalMs);
      if (outcome) done.push(outcome);
    }
    return done;
  });
  const tasks = outcomes.flatMap((outcome) => outcome.results.map((result) => result.task));
  // With --wait each run followed its task to the end, and said so.
  if (tasks.length > 0)
    await afterUpload(
      ctx,
      tasks.map((task) => task.id),
      outputs,
      { interval: options.interval },
      tasks,
    );
  const store = await ctx.store();
  for (const outcome of outcomes) await finishRun(store, outcome, ctx.now);
}

async function retryOne(
  ctx: Context,
  id: string,
  dir: string,
  options: RetryFailedOptions,
  pollIntervalMs: number,
): Promise<RunOutcome | undefined> {
  const store = await ctx.store();
  const scope = await ctx.scope();
  const deps: RetryListDeps = {
    client: await ctx.client(),
    store,
    scope,
    sleep: ctx.sleep,
    signal: ctx.signal,
    onPrepared: (result) => noteColumn(ctx, result),
  };
  const { origin, uploadedCount, retry, lineage } = await retryList(deps, id, dir);
  // The list the retry was rebuilt from is known only now: the output may not be it, and nothing is uploaded yet.
  await checkOutputs(ctx, { "-o": options.output }, { force: options.force, reading: [origin.sourcePath] });
  ctx.printer.note(`${count(retry.count)} of ${count(uploadedCount)} numbers of task ${id} got no result.`);
  if (retry.count === 0) return undefined;
  if (lineage.length > 1) {
    ctx.printer.note(
      `Already retried: these ${count(retry.count)} numbers got no result in ${count(lineage.length)} tasks in a row (${lineage.join(", ")}); the service may not be able to check them, so this retry may get no result either.`,
    );
  }
  const { settings, product, stored } = origin;
  // Under --country auto each task has its own country; the settings' is the one national numbers were read in.
  const country = settings.anyRegion ? stored.task.country : settings.country;
  const summary = { ...emptySummary(), kept: retry.count };
  const list = { ...retry, ...(settings.anyRegion && country ? { country } : {}) };
  const printer = runPrinter(ctx, options, { product, country }, pollIntervalMs, () => Promise.resolve());
  return submitRun(
    {
      command: { sourcePath: origin.sourcePath, product, country: settings.anyRegion ? "auto" : country, retryOf: id },
      product,
      country,
      prepare: { source: origin.sourcePath },
      lists: () =>
        Promise.resolve({
          value: {
            summary,
            column: { index: settings.column.index, chosenBy: "record" as const },
            format: { kind: "txt" as const, hasHeader: false, encoding: settings.encoding },
            chunks: [list],
            settings,
          },
          source: stored.run!.source,
        }),
      ...(await runFlagsRequest(ctx, options, pollIntervalMs)),
      // Its numbers are those the service answered without a result: retrying them is what it is for.
      countUnanswered: false,
      retryNoResult: true,
    },
    await runDeps(ctx, { product, workDir: dir, yes: options.yes, printer }),
  ).finally(async () => {
    await printer.stop();
    if (options.dryRun) ctx.printer.note("Dry run: nothing was uploaded.");
  });
}

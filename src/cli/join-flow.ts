import { UsageError } from "../errors.js";
import type { PreparationSettings } from "../prepare/settings.js";
import { LIBPHONENUMBER_VERSION } from "../prepare/settings.js";
import { joinResults, type JoinSummary } from "../results/join.js";
import { readResults, resultMap } from "../results/read-results.js";
import { openTaskResult } from "../tasks/fetch-result.js";
import type { Context } from "./context.js";
import { billing, billingJson, describeBilling } from "./billing.js";
import { checkDestination, productOf, withTransferRetries } from "./download-flow.js";
import { absolutePath } from "./paths.js";
import { isStdout, withStagedOutput, writeAtomically } from "./staged-output.js";

export interface JoinFlags {
  join: string;
  output?: string;
  force?: boolean;
}

/**
 * Downloads the tasks' results into memory (identifier → columns) and writes the
 * source rows with the result columns beside them, reading the source with the
 * preparation settings the journal kept for these tasks.
 */
export async function joinTasks(ctx: Context, ids: readonly string[], flags: JoinFlags): Promise<JoinSummary> {
  checkDestination(ctx, flags.output, flags.force);
  const sourcePath = absolutePath(ctx, flags.join);
  const settings = await preparationOf(ctx, ids, sourcePath);
  const client = await ctx.client();
  const tasks = await Promise.all(ids.map((id) => client.checkTask(id)));
  const serviceType = productOf(tasks);
  const results = await withTransferRetries(ctx, () =>
    resultMap(
      readResults(
        tasks.map((task) => ({ label: `task ${task.id}`, open: () => openTaskResult(task.id, { client, sleep: ctx.sleep, signal: ctx.signal }) })),
        { serviceType, signal: ctx.signal },
      ),
    ),
  );
  const summary = await withStagedOutput(ctx, flags.output, (path) =>
    writeAtomically(path, isStdout(flags.output) || Boolean(flags.force), (out) =>
      joinResults({ sourcePath, settings, results, out, signal: ctx.signal }),
    ),
  );
  const counts = Object.entries(summary.byStatus).filter(([, n]) => n > 0).map(([status, n]) => `${status} ${n}`).join(", ");
  ctx.printer.note(`Wrote ${summary.rows} source rows${isStdout(flags.output) ? "" : ` to ${flags.output}`} with the ${serviceType} columns: ${counts}.`);
  const bill = billing(tasks, await ctx.prices());
  for (const line of describeBilling(bill)) ctx.printer.note(line);
  if (ctx.globals.json && !isStdout(flags.output)) {
    ctx.printer.json({ rows_written: summary.rows, path: absolutePath(ctx, flags.output!), by_status: summary.byStatus, ...billingJson(bill) });
  }
  return summary;
}

/** The settings every task was prepared with, which must be the same for all of them. */
async function preparationOf(ctx: Context, ids: readonly string[], sourcePath: string): Promise<PreparationSettings> {
  const journal = await ctx.journal();
  let settings: PreparationSettings | undefined;
  for (const id of ids) {
    const record = await journal.findByTaskId(id);
    const preparation = record?.submit.preparation as PreparationSettings | undefined;
    if (!record || !preparation) {
      throw new UsageError(`There is no local record of how task ${id} was prepared, so its rows cannot be matched exactly.`, {
        hint: "Join on the machine (and profile's config directory) that submitted it, or download the plain result: bulkcheck download " + id,
      });
    }
    if (settings && JSON.stringify(settings) !== JSON.stringify(preparation)) {
      throw new UsageError("These tasks were prepared from different lists or with different options; join them one at a time.");
    }
    settings = preparation;
    if (record.submit.source.path && record.submit.source.path !== sourcePath) {
      ctx.printer.warn(`task ${id} was submitted from ${record.submit.source.path}; joining with ${sourcePath}.`);
    }
  }
  if (settings!.libphonenumber.version !== LIBPHONENUMBER_VERSION) {
    ctx.printer.warn(`the list was prepared with libphonenumber-js ${settings!.libphonenumber.version}, this is ${LIBPHONENUMBER_VERSION}: a few numbers may not match.`);
  }
  return settings!;
}

import type { Context } from "../context.js";
import { readIds } from "../read-ids.js";
import { absolutePath } from "../paths.js";
import { downloadToOutput, type DownloadFlags } from "./shared/download-output.js";
import { joinFormat } from "./shared/output-format.js";
import { checkReportFlags } from "./shared/report-flags.js";
import { reportFromResults } from "./shared/report-output.js";
import { checkOutputs } from "./shared/destination.js";

export interface DownloadOptions extends DownloadFlags {
  join?: string;
  /** With --join: neutralise the source's formula-like cells too. */
  safeCsv?: boolean;
}

/**
 * `download`: the tasks' results merged into one output, or with --join the source's rows
 * with the results beside them (outputs/join.ts's writeJoin decides what is joined), then
 * the report when asked.
 */
export async function downloadAction(ctx: Context, ids: string[], options: DownloadOptions): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  ctx.outcome.addTasks(taskIds);
  if (options.join === undefined) {
    await downloadToOutput(ctx, taskIds, options);
    return;
  }
  const format = joinFormat(ctx, options);
  checkReportFlags(options);
  await checkOutputs(ctx, { "-o": options.output, "--report": options.report }, { force: options.force, reading: [options.join] });
  const prices = await ctx.prices();
  // The join reads the source again with libphonenumber-js (~60 ms to load): only --join pays for it.
  const { joinDeps, printJoin, writeJoinTo } = await import("./shared/join-output.js");
  const joined = await writeJoinTo(
    ctx,
    {
      taskIds,
      sourcePath: absolutePath(ctx, options.join),
      output: options.output,
      force: Boolean(options.force),
      format,
      prices,
      safeCsv: Boolean(options.safeCsv),
    },
    await joinDeps(ctx, options),
  );
  printJoin(ctx, joined, { output: options.output, format, prices });
  // The join does not count rows by result column: the report reads the results once more.
  if (options.report !== undefined) await reportFromResults(ctx, taskIds, options.report, options.force);
}

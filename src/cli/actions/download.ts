import type { Context } from "../context.js";
import { readIds } from "../read-ids.js";
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
  // The join reads the source again with libphonenumber-js (~60 ms to load): only --join pays for it.
  const { joinToOutput } = await import("./shared/join-output.js");
  await joinToOutput(ctx, taskIds, { ...options, join: options.join, format });
  // The join does not count rows by result column: the report reads the results once more.
  if (options.report !== undefined) await reportFromResults(ctx, taskIds, options.report, options.force);
}

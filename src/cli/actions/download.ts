import { writeMergedOutput, writeReportOutput } from "../../outputs/output-files.js";
import { assertRowCounts } from "../../results/index.js";
import type { Context } from "../context.js";
import { readIds } from "../read-ids.js";
import { absolutePath } from "../paths.js";
import { joinFormat, resultFormat } from "./shared/output-format.js";
import { checkReportFlags } from "./shared/report-flags.js";
import { checkOutputs } from "./shared/destination.js";
import { outputDeps, type DownloadFlags } from "./shared/output-deps.js";
import { terminalTable } from "../views/output-events.js";

export interface DownloadOptions extends DownloadFlags {
  join?: string;
  /** With --join: neutralise the source's formula-like cells too. */
  safeCsv?: boolean;
}

/**
 * `download`: the tasks' results merged into one output (with --report, the report from the
 * same reading), or with --join the source's rows with the results beside them
 * (outputs/join.ts's writeJoin decides what is joined), then the report when asked. Stdout
 * output is staged in a temp file first, so a transfer that breaks and restarts never leaves
 * half a file in a pipe.
 */
export async function downloadAction(ctx: Context, ids: string[], options: DownloadOptions): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  ctx.outcome.addTasks(taskIds);
  checkReportFlags(options);
  const force = Boolean(options.force);
  if (options.join === undefined) {
    await checkOutputs(ctx, { "-o": options.output, "--report": options.report }, { force });
    const format = resultFormat(ctx, options);
    const deps = await outputDeps(ctx, options);
    const { summary } = await writeMergedOutput(
      taskIds,
      { path: options.output, format, force, report: options.report, table: terminalTable(ctx) },
      {},
      deps,
    );
    if (options.strict) assertRowCounts(summary);
    return;
  }
  const format = joinFormat(ctx, options);
  await checkOutputs(ctx, { "-o": options.output, "--report": options.report }, { force, reading: [options.join] });
  const deps = await outputDeps(ctx, options);
  // The join reads the source again with libphonenumber-js (~60 ms to load): only --join pays for it.
  const { writeJoinedOutput } = await import("../../outputs/join.js");
  const join = {
    taskIds,
    sourcePath: absolutePath(ctx, options.join),
    output: options.output,
    force,
    format,
    safeCsv: Boolean(options.safeCsv),
  };
  await writeJoinedOutput(join, {}, deps);
  // The join does not count rows by result column: the report reads the results once more.
  if (options.report !== undefined) await writeReportOutput(taskIds, options.report, force, {}, deps);
}

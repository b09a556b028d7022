import type { StagedResults } from "../../../tasks/download.js";
import { billing } from "../../../tasks/billing.js";
import { assertReadableTwice } from "../../../prepare/input-source.js";
import type { JoinSummary } from "../../../outputs/join-rows.js";
import { count } from "../../../format-count.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { billingJson, describeBilling } from "./billing-report.js";
import { checkOutputs, isStdout } from "./destination.js";
import { downloadDeps } from "./download-deps.js";
import { joinWholeRuns } from "../../../outputs/whole-runs.js";
import { withStagedOutput } from "./staged-output.js";

export interface JoinFlags {
  join: string;
  output?: string;
  force?: boolean;
  /** Decided by joinFormat. */
  format: "csv" | "xlsx";
  /** --safe-csv: neutralise the source's formula-like cells too. */
  safeCsv?: boolean;
  /** --no-ledger: keep nothing of this download in the ledger. */
  ledger?: boolean;
}

/**
 * Writes the source rows with the tasks' result columns beside them, to a file
 * or (staged, like a download) stdout, and prints what was written and billed;
 * `staged` results are read from where they were fetched to.
 */
export async function joinToOutput(ctx: Context, ids: readonly string[], flags: JoinFlags, staged?: StagedResults): Promise<JoinSummary> {
  await checkOutputs(ctx, { "-o": flags.output }, { force: flags.force, reading: [flags.join] });
  const sourcePath = absolutePath(ctx, flags.join);
  await assertReadableTwice(sourcePath, "--join");
  const { output } = flags;
  const toStdout = isStdout(output);
  const deps = { ...(await downloadDeps(ctx, flags)), ...(staged ? { staged } : {}) };
  const prices = await ctx.prices();
  const { summary, serviceType, tasks } = await withStagedOutput(ctx, output, async (path, mode) =>
    joinWholeRuns(
      {
        ...deps,
        store: await ctx.store(),
        scope: await ctx.scope(),
        now: ctx.now,
        onWholeRun: (added) =>
          ctx.printer.note(
            `Joining the whole run: ${added.join(", ")} ${added.length === 1 ? "is a part" : "are parts"} of the same run as ${ids.join(", ")}.`,
          ),
      },
      ids,
      {
        sourcePath,
        path,
        ...(mode === undefined ? {} : { mode }),
        force: toStdout || Boolean(flags.force),
        acceptChangedSource: Boolean(flags.force),
        format: flags.format,
        prices,
        safeCsv: Boolean(flags.safeCsv),
      },
    ),
  );
  const counts = Object.entries(summary.byStatus)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${status} ${count(n)}`)
    .join(", ");
  ctx.printer.note(
    `Wrote ${count(summary.rows)} source rows${toStdout ? "" : ` to ${output}`} with the ${serviceType} columns: ${counts}.`,
  );
  if (summary.prefix) {
    ctx.printer.note(
      `The source already has a column named like a result column, so every added column starts with ${summary.prefix}: ${summary.addedColumns.join(", ")}.`,
    );
  }
  ctx.outcome.output = toStdout ? "-" : absolutePath(ctx, output);
  ctx.outcome.charge(tasks, prices);
  const bill = billing(tasks, prices);
  const inFile = { checked: summary.byStatus.checked, noResult: summary.byStatus.no_result };
  for (const line of describeBilling(bill, inFile)) ctx.printer.note(line);
  if (ctx.globals.json && !toStdout) {
    ctx.printer.json({
      type: "output",
      rows_written: summary.rows,
      path: absolutePath(ctx, output),
      format: flags.format,
      by_status: summary.byStatus,
      added_columns: summary.addedColumns,
      ...billingJson(bill, inFile),
    });
  }
  return summary;
}

import { joinTaskResults } from "../../../tasks/join.js";
import { billing } from "../../../tasks/billing.js";
import type { JoinSummary } from "../../../results/join.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { billingJson, describeBilling } from "./billing-report.js";
import { checkDestination, isStdout } from "./destination.js";
import { brokeOff } from "./download-output.js";
import { withStagedOutput } from "./staged-output.js";

export interface JoinFlags {
  join: string;
  output?: string;
  force?: boolean;
  /** Decided by joinFormat. */
  format: "csv" | "xlsx";
}

/**
 * Writes the source rows with the tasks' result columns beside them, to a file
 * or (staged, like a download) stdout, and prints what was written and billed.
 */
export async function joinToOutput(ctx: Context, ids: readonly string[], flags: JoinFlags): Promise<JoinSummary> {
  checkDestination(ctx, flags.output, flags.force);
  const sourcePath = absolutePath(ctx, flags.join);
  const { output } = flags;
  const toStdout = isStdout(output);
  const deps = {
    client: () => ctx.client(),
    journal: await ctx.journal(),
    sleep: ctx.sleep,
    signal: ctx.signal,
    onWarning: (text: string) => ctx.printer.warn(text),
    onRestart: (error: Error) => ctx.printer.note(brokeOff(error)),
  };
  const prices = await ctx.prices();
  const { summary, serviceType, tasks } = await withStagedOutput(ctx, output, (path) =>
    joinTaskResults(deps, ids, { sourcePath, path, force: toStdout || Boolean(flags.force), format: flags.format, prices }),
  );
  const counts = Object.entries(summary.byStatus)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${status} ${n}`)
    .join(", ");
  ctx.printer.note(`Wrote ${summary.rows} source rows${toStdout ? "" : ` to ${output}`} with the ${serviceType} columns: ${counts}.`);
  const bill = billing(tasks, prices);
  for (const line of describeBilling(bill)) ctx.printer.note(line);
  if (ctx.globals.json && !toStdout) {
    ctx.printer.json({
      rows_written: summary.rows,
      path: absolutePath(ctx, output),
      format: flags.format,
      by_status: summary.byStatus,
      ...billingJson(bill),
    });
  }
  return summary;
}

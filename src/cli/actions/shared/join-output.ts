import type { StagedResults } from "../../../tasks/download.js";
import { billing } from "../../../tasks/billing.js";
import { writeJoin, type JoinEvent, type JoinOutcome, type JoinRequestDeps } from "../../../outputs/join.js";
import { joinCounts } from "../../../outputs/join-rows.js";
import type { ServiceType } from "../../../spec/products.js";
import { count } from "../../../format-count.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { billingJson, describeBilling } from "./billing-report.js";
import { isStdout } from "./destination.js";
import { downloadDeps } from "./download-deps.js";
import { withStagedOutput } from "./staged-output.js";

/** A join as `download --join` and a run's `--join` both ask for it. */
export interface JoinFlags {
  taskIds: readonly string[];
  /** The list joined to, absolute. */
  sourcePath: string;
  /** -o: a file, or stdout ("-" or none). */
  output: string | undefined;
  /** --force: replace the output, and join to a list changed since it was submitted. */
  force: boolean;
  format: "csv" | "xlsx";
  prices: Record<ServiceType, number>;
  safeCsv: boolean;
}

/** Writes the join to its output (stdout through a private file of its own, which is replaced). */
export function writeJoinTo(ctx: Context, join: JoinFlags, deps: JoinRequestDeps): Promise<JoinOutcome> {
  const { output, force, ...request } = join;
  return withStagedOutput(ctx, output, (path, mode) =>
    writeJoin(
      { ...request, path, ...(mode === undefined ? {} : { mode }), force: isStdout(output) || force, acceptChangedSource: force },
      deps,
    ),
  );
}

/**
 * What a join (writeJoin, which decides what is joined) needs from this process: the
 * download's deps, the store, and its events told on stderr; `staged` results are a run's
 * own, read from where they were fetched to.
 */
export async function joinDeps(ctx: Context, flags: { ledger?: boolean }, staged?: StagedResults): Promise<JoinRequestDeps> {
  return {
    ...(await downloadDeps(ctx, flags)),
    ...(staged ? { staged } : {}),
    store: await ctx.store(),
    scope: await ctx.scope(),
    now: ctx.now,
    onEvent: (event: JoinEvent) => {
      const { given, added } = event;
      ctx.printer.note(
        `Joining the whole run: ${added.join(", ")} ${added.length === 1 ? "is a part" : "are parts"} of the same run as ${given.join(", ")}.`,
      );
    },
  };
}

/** Tells what a join wrote (to `output`, or stdout) and what its tasks were billed. */
export function printJoin(
  ctx: Context,
  { summary, serviceType, tasks }: JoinOutcome,
  written: { output: string | undefined; format: "csv" | "xlsx"; prices: Record<ServiceType, number>; runId?: string | undefined },
): void {
  const { output, prices } = written;
  const toStdout = isStdout(output);
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
  const inFile = joinCounts(summary);
  for (const line of describeBilling(bill, inFile)) ctx.printer.note(line);
  if (ctx.globals.json && !isStdout(output)) {
    ctx.printer.json({
      type: "output",
      ...(written.runId === undefined ? {} : { run: written.runId }),
      rows_written: summary.rows,
      path: absolutePath(ctx, output),
      format: written.format,
      by_status: summary.byStatus,
      added_columns: summary.addedColumns,
      ...billingJson(bill, inFile),
    });
  }
}

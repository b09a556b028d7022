import { assertRowCounts, describeSummary, type OutputFormat, type ResultSummary } from "../../../results/index.js";
import { planOf } from "../../../run/run-record.js";
import type { ServiceType } from "../../../spec/products.js";
import type { Task } from "../../../spec/task.js";
import { signalByCountry } from "../../../report/model.js";
import { billing, type ExcludedBeforeUpload } from "../../../tasks/billing.js";
import { downloadResults, resultCounts } from "../../../tasks/download.js";
import type { Context } from "../../context.js";
import { billingJson, describeBilling, describeExcluded } from "./billing-report.js";
import { downloadDeps } from "./download-deps.js";
import { checkOutputs, isStdout } from "./destination.js";
import { absolutePath } from "../../paths.js";
import { resultFormat } from "./output-format.js";
import { checkReportFlags } from "./report-flags.js";
import { writeReport, type OutputOfRun } from "./report-output.js";
import { withStagedOutput } from "./staged-output.js";

export interface DownloadFlags {
  output?: string;
  force?: boolean;
  format?: OutputFormat;
  strict?: boolean;
  /** Also write the HTML report of the run here. */
  report?: string;
  /** --no-ledger: keep nothing of this download in the ledger. */
  ledger?: boolean;
}

/**
 * Downloads (and merges) the results of finished tasks to a file or stdout and
 * prints the summary, and with --report writes the report from the same reading;
 * a run's own output reads its staged results from where they were fetched to.
 * Stdout output is staged in a temp file first, so a transfer that breaks and
 * restarts never leaves half a file in a pipe.
 */
export async function downloadToOutput(
  ctx: Context,
  taskIds: readonly string[],
  flags: DownloadFlags,
  run: OutputOfRun = {},
): Promise<ResultSummary> {
  const { staged } = run;
  checkReportFlags(flags);
  await checkOutputs(ctx, { "-o": flags.output, "--report": flags.report }, { force: flags.force });
  const toStdout = isStdout(flags.output);
  const format = resultFormat(ctx, flags);
  const prices = await ctx.prices();
  const outcome = await withStagedOutput(
    ctx,
    flags.output,
    async (path, mode) =>
      downloadResults({ ...(await downloadDeps(ctx, flags)), ...(staged ? { staged } : {}) }, taskIds, {
        path,
        ...(mode === undefined ? {} : { mode }),
        force: toStdout || Boolean(flags.force),
        format,
        colour: ctx.printer.options.colour,
        tableWidth: ctx.io.stdout.columns || undefined,
        terminal: toStdout && Boolean(ctx.io.stdout.isTTY),
        prices,
      }),
    format === "table" ? "table" : format === "jsonl" ? "json-lines" : "data",
  );
  ctx.outcome.output = toStdout ? "-" : absolutePath(ctx, flags.output!);
  ctx.outcome.charge(outcome.tasks, prices);
  reportSummary(ctx, outcome.summary, {
    tasks: outcome.tasks,
    excluded: outcome.excluded,
    dataOnStdout: toStdout,
    prices,
    runId: run.record?.id,
    waiting: (run.record && planOf(run.record))?.waiting ?? 0,
  });
  if (flags.report !== undefined) await writeReport(ctx, flags.report, outcome, flags.force, { changes: run.changes, run: run.record });
  if (flags.strict) assertRowCounts(outcome.summary);
  return outcome.summary;
}

/** The rows' counts in a --json summary; a report's tables show the same numbers. */
function talliesJson(summary: ResultSummary, tasks: readonly Task[]) {
  if (summary.signal) {
    const byCountry = signalByCountry(tasks, summary.sources);
    return {
      activated: summary.signal,
      ...(byCountry.length > 0
        ? { activated_by_country: Object.fromEntries(byCountry.map(({ country, counts }) => [country, counts])) }
        : {}),
    };
  }
  if (!summary.carrier) return {};
  const { topCarriers, topNumberTypes, topRegions, differences } = summary.carrier;
  return {
    top_carriers: topCarriers,
    top_number_types: topNumberTypes,
    top_regions: topRegions,
    carrier_differences: {
      rows: differences.rows,
      top: differences.top.map((pair) => ({ carrier: pair.carrier, underlying_carrier: pair.underlyingCarrier, count: pair.count })),
    },
  };
}

interface SummaryContext {
  tasks: readonly Task[];
  excluded: ExcludedBeforeUpload | undefined;
  dataOnStdout: boolean;
  prices: Record<ServiceType, number>;
  /** The run whose output this is (a submit's), named in --json beside its task and run objects. */
  runId: string | undefined;
  /** Its numbers left waiting for a later run (no row, and no result either). */
  waiting: number;
}

function reportSummary(ctx: Context, summary: ResultSummary, context: SummaryContext): void {
  const { tasks, excluded, dataOnStdout, prices, runId } = context;
  const bill = billing(tasks, prices);
  const counts = { ...resultCounts(tasks, summary.sources), waiting: context.waiting };
  const lines = [...describeSummary({ ...summary, path: dataOnStdout ? undefined : summary.path }), ...describeBilling(bill, counts)];
  if (excluded) lines.push(describeExcluded(excluded));
  for (const line of lines) {
    if (line.startsWith("Warning: ")) ctx.printer.warn(line.slice("Warning: ".length));
    else ctx.printer.note(line);
  }
  if (ctx.globals.json && !dataOnStdout) {
    ctx.printer.json({
      type: "output",
      ...(runId === undefined ? {} : { run: runId }),
      rows_written: summary.rowsWritten,
      path: summary.path,
      format: summary.format,
      ...billingJson(bill, counts),
      ...(excluded ? { excluded_before_upload: excluded } : {}),
      ...talliesJson(summary, tasks),
      mismatches: summary.mismatches,
    });
  }
}

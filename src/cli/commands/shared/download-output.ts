import { assertRowCounts, describeSummary, type OutputFormat, type ResultSummary } from "../../../results/index.js";
import type { ServiceType } from "../../../spec/products.js";
import type { Task } from "../../../spec/task.js";
import { billing, type ExcludedBeforeUpload } from "../../../tasks/billing.js";
import { downloadResults, resultLabel } from "../../../tasks/download.js";
import type { Context } from "../../context.js";
import { billingJson, describeBilling, describeExcluded, type OutputCounts } from "./billing-report.js";
import { checkDestination, isStdout } from "./destination.js";
import { withStagedOutput } from "./staged-output.js";

export interface DownloadFlags {
  output?: string;
  force?: boolean;
  format?: OutputFormat;
  strict?: boolean;
}

/**
 * Downloads (and merges) the results of finished tasks to a file or stdout and
 * prints the summary. Stdout output is staged in a temp file first, so a
 * transfer that breaks and restarts never leaves half a file in a pipe.
 */
export async function downloadToOutput(ctx: Context, taskIds: readonly string[], flags: DownloadFlags): Promise<ResultSummary> {
  checkDestination(ctx, flags.output, flags.force);
  const toStdout = isStdout(flags.output);
  const outcome = await withStagedOutput(ctx, flags.output, async (path) =>
    downloadResults(
      {
        client: () => ctx.client(),
        journal: await ctx.journal(),
        sleep: ctx.sleep,
        signal: ctx.signal,
        onRestart: (error) => ctx.printer.note(brokeOff(error)),
      },
      taskIds,
      {
        path,
        force: toStdout || Boolean(flags.force),
        format: outputFormat(ctx, flags.format, toStdout),
        colour: ctx.printer.options.colour,
        tableWidth: ctx.io.stdout.columns || undefined,
      },
    ),
  );
  reportSummary(ctx, outcome.summary, {
    tasks: outcome.tasks,
    excluded: outcome.excluded,
    dataOnStdout: toStdout,
    prices: await ctx.prices(),
  });
  if (flags.strict) assertRowCounts(outcome.summary);
  return outcome.summary;
}

/** What a restarted transfer tells the user. */
export function brokeOff(error: Error): string {
  return `The download broke off (${error.message}); starting again with a fresh link.`;
}

/** Default csv (jsonl for --json on stdout); a boxed table only on a terminal, TSV anywhere else. */
function outputFormat(ctx: Context, format: OutputFormat | undefined, toStdout: boolean): OutputFormat {
  if (format === "table") return toStdout && ctx.io.stdout.isTTY ? "table" : "tsv";
  return format ?? (ctx.globals.json && toStdout ? "jsonl" : "csv");
}

interface SummaryContext {
  tasks: readonly Task[];
  excluded: ExcludedBeforeUpload | undefined;
  dataOnStdout: boolean;
  prices: Record<ServiceType, number>;
}

/**
 * Rows in the output, and each task's numbers that have none there: a task's
 * `total` less the rows its result gave.
 */
function outputCounts(summary: ResultSummary, tasks: readonly Task[]): OutputCounts {
  const rows = new Map(summary.sources.map((source) => [source.label, source.rows]));
  const noResult = tasks.reduce((sum, task) => sum + Math.max(0, task.total - (rows.get(resultLabel(task.id)) ?? 0)), 0);
  return { checked: summary.rows, noResult };
}

function reportSummary(ctx: Context, summary: ResultSummary, { tasks, excluded, dataOnStdout, prices }: SummaryContext): void {
  const bill = billing(tasks, prices);
  const counts = outputCounts(summary, tasks);
  const lines = [...describeSummary({ ...summary, path: dataOnStdout ? undefined : summary.path }), ...describeBilling(bill, counts)];
  if (excluded) lines.push(describeExcluded(excluded));
  for (const line of lines) {
    if (line.startsWith("Warning: ")) ctx.printer.warn(line.slice("Warning: ".length));
    else ctx.printer.note(line);
  }
  if (ctx.globals.json && !dataOnStdout) {
    ctx.printer.json({
      rows_written: summary.rowsWritten,
      path: summary.path,
      format: summary.format,
      ...billingJson(bill, counts),
      ...(excluded ? { excluded_before_upload: excluded } : {}),
      ...(summary.signal ? { activated: summary.signal } : {}),
      ...(summary.carrier ? { top_carriers: summary.carrier.topCarriers, top_number_types: summary.carrier.topNumberTypes } : {}),
      mismatches: summary.mismatches,
    });
  }
}

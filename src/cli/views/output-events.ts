import { joinCounts } from "../../outputs/join-rows.js";
import type { MergedOutput, OutputEvent } from "../../outputs/output-files.js";
import { signalByCountry } from "../../report/model.js";
import { describeSummary } from "../../results/index.js";
import type { ServiceType } from "../../spec/products.js";
import type { Task } from "../../spec/task.js";
import { billing } from "../../tasks/billing.js";
import { resultCounts, type DownloadOutcome } from "../../tasks/download.js";
import { formatDuration } from "../../api/attempts.js";
import { count } from "../../format-count.js";
import type { Context } from "../context.js";
import { absolutePath } from "../paths.js";
import { billingJson, describeBilling, describeExcluded } from "./billing-report.js";

/** What the outputs' events are told with: the run whose output it is (named in --json), and its numbers left waiting. */
export interface OutputContext {
  runId?: string | undefined;
  waiting?: number;
}

/** How a table written to this process's stdout is drawn: its colours, width and whether a terminal reads it. */
export function terminalTable(ctx: Context): MergedOutput["table"] {
  return { colour: ctx.printer.options.colour, width: ctx.io.stdout.columns || undefined, terminal: Boolean(ctx.io.stdout.isTTY) };
}

/** How the terminal tells each output as it is written. */
type DrawContext = OutputContext & { prices: Record<ServiceType, number> };

export function drawOutputEvent(ctx: Context, context: DrawContext): (event: OutputEvent) => void {
  return (event) => {
    if (event.type === "whole-run") {
      const { given, added } = event;
      const doing = event.output === "join" ? "Joining" : "Reporting";
      ctx.printer.note(
        `${doing} the whole run: ${added.join(", ")} ${added.length === 1 ? "is a part" : "are parts"} of the same run as ${given.join(", ")}.`,
      );
    } else if (event.type === "merged") drawMerged(ctx, event.outcome, event.path, context);
    else if (event.type === "joined") drawJoined(ctx, event, context);
    else if (event.path !== undefined) ctx.printer.note(`Wrote the report to ${event.path}.`);
  };
}

/** Tells what a merged output wrote and what its tasks were billed. */
function drawMerged(ctx: Context, outcome: DownloadOutcome, path: string | undefined, context: DrawContext): void {
  const { summary, tasks, excluded } = outcome;
  const { prices } = context;
  const dataOnStdout = path === undefined;
  ctx.outcome.output = dataOnStdout ? "-" : absolutePath(ctx, path);
  ctx.outcome.charge(tasks, prices);
  const bill = billing(tasks, prices);
  const counts = { ...resultCounts(tasks, summary.sources), waiting: context.waiting ?? 0 };
  const lines = [...describeSummary({ ...summary, path: dataOnStdout ? undefined : summary.path }), ...describeBilling(bill, counts)];
  if (excluded) lines.push(describeExcluded(excluded));
  for (const line of lines) {
    if (line.startsWith("Warning: ")) ctx.printer.warn(line.slice("Warning: ".length));
    else ctx.printer.note(line);
  }
  if (ctx.globals.json && !dataOnStdout) {
    ctx.printer.json({
      type: "output",
      ...(context.runId === undefined ? {} : { run: context.runId }),
      rows_written: summary.rowsWritten,
      path: summary.path,
      format: summary.format,
      ...billingJson(bill, counts),
      ...(excluded ? { excluded_before_upload: excluded } : {}),
      ...talliesJson(outcome),
      mismatches: summary.mismatches,
    });
  }
}

/** The rows' counts in a --json summary; a report's tables show the same numbers. */
function talliesJson({ summary, tasks }: { summary: DownloadOutcome["summary"]; tasks: readonly Task[] }) {
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

/** Tells what a join wrote (to `path`, or stdout) and what its tasks were billed. */
function drawJoined(ctx: Context, event: Extract<OutputEvent, { type: "joined" }>, context: DrawContext): void {
  const { outcome, path, format } = event;
  const { summary, serviceType, tasks } = outcome;
  // A chain's join has every product's columns.
  const products = [serviceType, ...(event.laterProducts ?? [])];
  const { prices } = context;
  const byStatus = Object.entries(summary.byStatus)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${status} ${count(n)}`)
    .join(", ");
  ctx.printer.note(
    `Wrote ${count(summary.rows)} source rows${path === undefined ? "" : ` to ${path}`} with the ${products.join(" and ")} columns: ${byStatus}.`,
  );
  if (summary.prefix) {
    ctx.printer.note(
      `The source already has a column named like a result column, so every added column starts with ${summary.prefix}: ${summary.addedColumns.join(", ")}.`,
    );
  }
  ctx.outcome.output = path === undefined ? "-" : absolutePath(ctx, path);
  ctx.outcome.charge(tasks, prices);
  const bill = billing(tasks, prices);
  const inFile = joinCounts(summary);
  for (const line of describeBilling(bill, inFile)) ctx.printer.note(line);
  if (ctx.globals.json && path !== undefined) {
    ctx.printer.json({
      type: "output",
      ...(context.runId === undefined ? {} : { run: context.runId }),
      rows_written: summary.rows,
      path: absolutePath(ctx, path),
      format,
      by_status: summary.byStatus,
      added_columns: summary.addedColumns,
      ...billingJson(bill, inFile),
    });
  }
}

/** What a wait for a result file not yet published tells the user. */
export function notPublished(taskId: string, delayMs: number): string {
  return `The result file of task ${taskId} is not published yet; checking again in ${formatDuration(delayMs)}.`;
}

/** What a restarted transfer tells the user. */
export function brokeOff(error: Error): string {
  return `The download broke off (${error.message}); starting again with a fresh link.`;
}

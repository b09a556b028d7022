import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { BulkcheckError, ServiceUnavailableError, UsageError } from "../errors.js";
import { assertRowCounts, describeSummary, taskCharge, writeResults, type OutputFormat, type ResultSummary } from "../results/index.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { isBrokenTransfer, openTaskResult } from "../tasks/fetch-result.js";
import { billing, billingJson, describeBilling, describeExcluded, excludedBeforeUpload } from "./billing.js";
import type { Context } from "./context.js";
import { absolutePath } from "./paths.js";
import { isStdout, withStagedOutput } from "./staged-output.js";

export interface DownloadFlags {
  output?: string;
  force?: boolean;
  format?: OutputFormat;
  strict?: boolean;
}

/** Whole-download attempts when the transfer breaks midway (each with a fresh link). */
const TRANSFER_ATTEMPTS = 3;

/**
 * Downloads (and merges) the results of finished tasks to a file or stdout and
 * prints the summary. Stdout output is staged in a temp file first, so a
 * transfer that breaks and restarts never leaves half a file in a pipe.
 */
export async function downloadTasks(ctx: Context, taskIds: readonly string[], flags: DownloadFlags): Promise<ResultSummary> {
  checkDestination(ctx, flags.output, flags.force);
  const client = await ctx.client();
  const checked = await Promise.all(taskIds.map((id) => client.checkTask(id)));
  const tasks = new Map(checked.map((task) => [task.id, task]));
  const serviceType = productOf(checked);
  const toStdout = isStdout(flags.output);
  const sources = checked.map((task) => {
    // The check just made serves the first open; a restarted transfer checks again for a fresh link.
    let initial: Task | undefined = task;
    return {
      label: `task ${task.id}`,
      ...(task.success_cnt === undefined ? {} : { expectedRows: task.success_cnt }),
      open: () => {
        const first = initial;
        initial = undefined;
        return openTaskResult(task.id, { client, sleep: ctx.sleep, signal: ctx.signal, initial: first, onTask: (fresh) => tasks.set(fresh.id, fresh) });
      },
    };
  });
  const summary = await withStagedOutput(ctx, flags.output, (path) =>
    withTransferRetries(ctx, () =>
      writeResults(sources, { path, force: toStdout || Boolean(flags.force) }, {
        serviceType,
        format: outputFormat(ctx, flags.format, toStdout),
        signal: ctx.signal,
        colour: ctx.printer.options.colour,
      }),
    ),
  );
  const excluded = await excludedBeforeUpload(await ctx.journal(), taskIds);
  reportSummary(ctx, summary, { tasks: [...tasks.values()], excluded, dataOnStdout: toStdout, prices: await ctx.prices() });
  if (flags.strict) assertRowCounts(summary);
  return summary;
}

/** Refuses, before any request, an -o FILE that exists (without --force) or whose directory does not. */
/** Default csv (jsonl for --json on stdout); a boxed table only on a terminal, TSV anywhere else. */
function outputFormat(ctx: Context, format: OutputFormat | undefined, toStdout: boolean): OutputFormat {
  if (format === "table") return toStdout && ctx.io.stdout.isTTY ? "table" : "tsv";
  return format ?? (ctx.globals.json && toStdout ? "jsonl" : "csv");
}

export function checkDestination(ctx: Context, output: string | undefined, force: boolean | undefined): void {
  if (isStdout(output)) return;
  const path = absolutePath(ctx, output!);
  if (!force && existsSync(path)) {
    throw new UsageError(`${output} already exists.`, { hint: "Choose another path, or pass --force to replace it." });
  }
  if (!statSync(dirname(path), { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(`Cannot write ${output}: the directory ${dirname(path)} does not exist.`, { hint: "Create it first, or choose another path." });
  }
}

export async function withTransferRetries<T>(ctx: Context, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (ctx.signal.aborted || !isBrokenTransfer(error)) throw error;
      if (attempt >= TRANSFER_ATTEMPTS) throw brokenOff(error);
      ctx.printer.note(`The download broke off (${(error as Error).message}); starting again with a fresh link.`);
    }
  }
}

/** The last broken transfer as exit 7 with what to do, instead of a raw socket error (exit 1). */
function brokenOff(error: unknown): unknown {
  if (error instanceof BulkcheckError) return error;
  return new ServiceUnavailableError(`The download broke off ${TRANSFER_ATTEMPTS} times (${(error as Error).message}); nothing was written.`, {
    hint: "Check the connection and run the same command again: downloading costs nothing.",
    cause: error,
  });
}

export function productOf(tasks: readonly Task[]): ServiceType {
  const products = new Set(tasks.map((task) => canonicalServiceType(task.product) ?? task.product));
  const [product] = products;
  if (products.size !== 1 || product === undefined || canonicalServiceType(product) === undefined) {
    throw new UsageError(`These tasks are of different products (${[...products].join(", ")}), whose result columns differ.`, {
      hint: "Download each product's tasks separately.",
    });
  }
  return product as ServiceType;
}

interface SummaryContext {
  tasks: readonly Task[];
  excluded: Record<string, number> | undefined;
  dataOnStdout: boolean;
  prices: Record<ServiceType, number>;
}

function reportSummary(ctx: Context, summary: ResultSummary, { tasks, excluded, dataOnStdout, prices }: SummaryContext): void {
  const bill = billing(tasks, prices);
  const lines = [...describeSummary({ ...summary, path: dataOnStdout ? undefined : summary.path }), ...describeBilling(bill)];
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
      ...billingJson(bill),
      ...(excluded ? { excluded_before_upload: excluded } : {}),
      ...(summary.signal ? { activated: summary.signal } : {}),
      ...(summary.carrier ? { top_carriers: summary.carrier.topCarriers, top_number_types: summary.carrier.topNumberTypes } : {}),
      mismatches: summary.mismatches,
    });
  }
}

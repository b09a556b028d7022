import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { randomBytes } from "node:crypto";
import { UsageError } from "../errors.js";
import { assertRowCounts, describeSummary, taskCharge, writeResults, type OutputFormat, type ResultSummary } from "../results/index.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { formatUsd } from "../tasks/cost.js";
import { isBrokenTransfer, openTaskResult } from "../tasks/fetch-result.js";
import type { Context } from "./context.js";

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
  const client = await ctx.client();
  const checked = await Promise.all(taskIds.map((id) => client.checkTask(id)));
  const tasks = new Map(checked.map((task) => [task.id, task]));
  const serviceType = productOf(checked);
  const toStdout = flags.output === undefined || flags.output === "-";
  const staged = toStdout ? join(tmpdir(), `bulkcheck-${process.pid}-${randomBytes(4).toString("hex")}.out`) : undefined;
  const destination = staged ? { path: staged } : { path: flags.output!, force: Boolean(flags.force) };
  const sources = checked.map((task) => ({
    label: `task ${task.id}`,
    ...(task.success_cnt === undefined ? {} : { expectedRows: task.success_cnt }),
    open: () => openTaskResult(task.id, { client, sleep: ctx.sleep, signal: ctx.signal, onTask: (fresh) => tasks.set(fresh.id, fresh) }),
  }));
  try {
    const summary = await withTransferRetries(ctx, () =>
      writeResults(sources, destination, {
        serviceType,
        format: flags.format ?? "csv",
        signal: ctx.signal,
        colour: ctx.printer.options.colour,
      }),
    );
    if (staged) await pipeline(createReadStream(staged), ctx.io.stdout, { end: false });
    reportSummary(ctx, summary, [...tasks.values()], toStdout);
    if (flags.strict) assertRowCounts(summary);
    return summary;
  } finally {
    if (staged) await rm(staged, { force: true });
  }
}

async function withTransferRetries<T>(ctx: Context, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (ctx.signal.aborted || attempt >= TRANSFER_ATTEMPTS || !isBrokenTransfer(error)) throw error;
      ctx.printer.note(`The download broke off (${(error as Error).message}); starting again with a fresh link.`);
    }
  }
}

function productOf(tasks: readonly Task[]): ServiceType {
  const products = new Set(tasks.map((task) => canonicalServiceType(task.product) ?? task.product));
  const [product] = products;
  if (products.size !== 1 || product === undefined || canonicalServiceType(product) === undefined) {
    throw new UsageError(`These tasks are of different products (${[...products].join(", ")}), whose result columns differ.`, {
      hint: "Download each product's tasks separately.",
    });
  }
  return product as ServiceType;
}

function reportSummary(ctx: Context, summary: ResultSummary, tasks: readonly Task[], dataOnStdout: boolean): void {
  const charges = tasks.map((task) => taskCharge(task)).filter((charge) => charge !== undefined);
  const charged = charges.reduce((sum, c) => sum + c.chargedMicros, 0);
  const refunded = charges.reduce((sum, c) => sum + c.refundedMicros, 0);
  const noResult = tasks.reduce((sum, task) => sum + (task.failure_cnt ?? 0), 0);
  const lines = describeSummary({ ...summary, path: dataOnStdout ? undefined : summary.path });
  lines.push(`No result: ${noResult}. Charged ${formatUsd(charged)} for ${summary.rows} checked numbers; refunded ${formatUsd(refunded)}.`);
  for (const line of lines) {
    if (line.startsWith("Warning: ")) ctx.printer.warn(line.slice("Warning: ".length));
    else ctx.printer.note(line);
  }
  if (ctx.globals.json && !dataOnStdout) {
    ctx.printer.json({
      rows_written: summary.rowsWritten,
      path: summary.path,
      format: summary.format,
      checked: summary.rows,
      no_result: noResult,
      charged_micros: charged,
      refunded_micros: refunded,
      signal: summary.signal,
      carrier: summary.carrier,
      mismatches: summary.mismatches,
    });
  }
}

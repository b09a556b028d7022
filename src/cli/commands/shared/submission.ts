import { formatUsd } from "../../../tasks/cost.js";
import { submitPrepared, type PreparedSubmission, type SubmitOptions, type SubmitPlan } from "../../../tasks/submit-prepared.js";
import type { UploadResult } from "../../../tasks/submit.js";
import type { Context } from "../../context.js";
import { canPrompt, confirm } from "../../prompt.js";
import { taskJson } from "../../task-view.js";

export interface SubmitFlags {
  idempotencyKey?: string;
  resubmit?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  maxCost?: number;
  /** Results will go to stdout (-o -): task ids then go to stderr so they do not mix with the data. */
  idsToStderr?: boolean;
}

/**
 * Submits a prepared list: prints the plan, asks before reserving (on a
 * terminal, without --yes or --json), and prints each task id on stdout (or as
 * JSON) in list order. Returns undefined for --dry-run.
 */
export async function submitAndReport(ctx: Context, prepared: PreparedSubmission, flags: SubmitFlags): Promise<UploadResult[] | undefined> {
  const { printer } = ctx;
  const limits = await ctx.limits();
  const priceMicros = (await ctx.prices())[prepared.product];
  const options: SubmitOptions = {
    idempotencyKey: flags.idempotencyKey,
    resubmit: flags.resubmit,
    dryRun: flags.dryRun,
    maxCostUsd: flags.maxCost,
  };
  const mayAsk = !flags.yes && !ctx.globals.json && canPrompt(ctx.io);
  const uploaded = await submitPrepared(
    {
      client: () => ctx.client(),
      journal: await ctx.journal(),
      installSecret: async () => (await ctx.config()).installSecret(),
      limits,
      priceMicros,
      scope: await ctx.journalScope(),
      now: ctx.now,
      onPlan: (plan) => printer.note(`Plan: ${describePlan(plan)}.`),
      confirmReservation: mayAsk
        ? (micros, balance) => confirm(ctx.io, `Reserve ${formatUsd(micros)} of ${formatUsd(balance)}?`)
        : undefined,
      onTask: (result) => reportTask(ctx, result, flags),
    },
    prepared,
    options,
  );
  if (flags.dryRun) printer.note("Dry run: nothing was uploaded.");
  return uploaded;
}

function describePlan(plan: SubmitPlan): string {
  const country = plan.country ? ` for ${plan.country}` : "";
  return `${plan.numbers} numbers in ${plan.tasks} task(s) of ${plan.product}${country}; reservation ${formatUsd(plan.reservationMicros)} at ${formatUsd(plan.priceMicros)} per number (only checked numbers are charged)`;
}

function reportTask(ctx: Context, { task, replayed, upload }: UploadResult, flags: SubmitFlags): void {
  const { printer } = ctx;
  if (flags.idsToStderr) printer.note(`Task ${task.id} submitted.`);
  else if (ctx.globals.json) printer.json(taskJson(task));
  else printer.data(task.id);
  if (replayed && upload.knownTaskId === undefined) {
    printer.note(
      `Task ${task.id} had already been created for this list by an earlier attempt whose answer was lost; the service returned it and nothing was reserved twice. Add --resubmit to force a new task.`,
    );
  } else if (replayed) {
    printer.note(
      `Task ${task.id} was already submitted for this list, product and country: the service returned it and nothing was reserved again. Add --resubmit to force a new task.`,
    );
  }
}

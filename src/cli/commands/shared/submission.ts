import { join } from "node:path";
import { formatUsd } from "../../../tasks/cost.js";
import { fetchToStaging, Staging } from "../../../tasks/staging.js";
import {
  submitPrepared,
  type PreparedSubmission,
  type ScheduleSettings,
  type SubmitOptions,
  type SubmitPlan,
} from "../../../tasks/submit-prepared.js";
import type { PlannedUpload, UploadResult } from "../../../tasks/submit.js";
import type { Context } from "../../context.js";
import { canPrompt, confirm } from "../../prompt.js";
import { taskJson } from "../../task-view.js";
import { commandLine } from "../../command-line.js";
import { brokeOff } from "./download-output.js";
import { createSubmitProgress, type SubmitProgress } from "./submit-progress.js";
import { pollInterval } from "./waiting.js";

export interface SubmitFlags {
  idempotencyKey?: string;
  resubmit?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  maxCost?: number;
  /** Results will go to stdout (-o -): task ids then go to stderr so they do not mix with the data. */
  idsToStderr?: boolean;
}

/** How the uploads are followed: submit's --wait, --interval, --timeout and -o. */
export interface ScheduleFlags {
  /** Wait for every task, while the uploads go on. */
  wait?: boolean;
  interval?: number;
  timeout?: number;
  /** With --wait -o: each result is fetched into the run's staging area as its task finishes; this receives that area. */
  staged?: (staging: Staging) => void;
}

/**
 * Submits a prepared list: prints the plan, asks before reserving (on a
 * terminal, without --yes or --json), schedules the uploads with progress on
 * stderr, and prints each task id on stdout (or as JSON) in list order. Returns
 * each part's task in its latest state, or undefined for --dry-run.
 */
export async function submitAndReport(
  ctx: Context,
  prepared: PreparedSubmission,
  flags: SubmitFlags,
  follow: ScheduleFlags = {},
): Promise<UploadResult[] | undefined> {
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
  const journal = await ctx.journal();
  let progress: SubmitProgress | undefined;
  const schedule = async (uploads: readonly PlannedUpload[]): Promise<ScheduleSettings> => {
    const pollIntervalMs = await pollInterval(ctx, follow.interval);
    progress = await createSubmitProgress(ctx, uploads, pollIntervalMs);
    const staging = follow.staged
      ? await Staging.open(
          join(journal.dir, "staging"),
          uploads.map((upload) => upload.idempotencyKey),
          journal,
          ctx.now,
        )
      : undefined;
    if (staging) follow.staged?.(staging);
    const client = await ctx.client();
    const fetchDeps = { client, sleep: ctx.sleep, signal: ctx.signal, onRestart: (error: Error) => ctx.printer.note(brokeOff(error)) };
    return {
      pollIntervalMs,
      untilFinished: Boolean(follow.wait),
      ...(follow.timeout === undefined ? {} : { timeoutMs: follow.timeout * 1000 }),
      resumeCommand: commandLine(ctx.argv),
      waitResumes: !staging,
      onEvent: (event) => progress?.onEvent(event),
      ...(staging
        ? {
            onSucceeded: async (result: UploadResult) => {
              await fetchToStaging(fetchDeps, staging, result);
            },
          }
        : {}),
    };
  };
  const uploaded = await submitPrepared(
    {
      client: () => ctx.client(),
      journal,
      installSecret: async () => (await ctx.config()).installSecret(),
      limits,
      priceMicros,
      scope: await ctx.journalScope(),
      now: ctx.now,
      sleep: ctx.sleep,
      random: ctx.random,
      signal: ctx.signal,
      schedule,
      onPlan: (plan) => printer.note(`Plan: ${describePlan(plan)}.`),
      confirmReservation: mayAsk
        ? (micros, balance) => confirm(ctx.io, `Reserve ${formatUsd(micros)} of ${formatUsd(balance)}?`)
        : undefined,
      onTask: (result) => reportTask(ctx, result, flags),
    },
    prepared,
    options,
  ).finally(() => progress?.stop());
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

import { join } from "node:path";
import { UsageError } from "../../../errors.js";
import { formatUsd } from "../../../tasks/cost.js";
import { fetchToStaging, Staging } from "../../../tasks/staging.js";
import { submitPrepared, type PreparedSubmission, type ScheduleSettings, type SubmitOptions } from "../../../tasks/submit-prepared.js";
import type { PlannedUpload, UploadResult } from "../../../tasks/submit.js";
import type { Context } from "../../context.js";
import { canPrompt, confirm, NOTHING_UPLOADED } from "../../prompt.js";
import { snakeCaseKeys } from "../../json-keys.js";
import { taskJson } from "../../task-view.js";
import { commandLine } from "../../command-line.js";
import { tasksGoOn } from "./after-upload.js";
import { brokeOff, notPublished } from "./download-output.js";
import { countryPlanLines, describePlan, planJson } from "./plan-view.js";
import { createSubmitProgress, type SubmitProgress } from "./submit-progress.js";
import { pollInterval } from "./waiting.js";

export interface SubmitFlags {
  idempotencyKey?: string;
  resubmit?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  maxCost?: number;
  /**
   * With --wait -o, the results are the data the user asked for: task ids go to
   * stdout only without -o (as JSON with --json, unless -o - takes stdout).
   */
  output?: string;
  /** --rejects: `-` takes stdout for the rejected rows, so task ids go to stderr. */
  rejects?: string;
}

/** How the uploads are followed: submit's --wait, --interval and -o (--timeout comes from the run's deadline). */
export interface ScheduleFlags {
  /** Wait for every task, while the uploads go on. */
  wait?: boolean;
  interval?: number;
  /** With --wait -o: each result is fetched into the run's staging area as its task finishes; this receives that area. */
  staged?: (staging: Staging) => void;
}

/**
 * Submits a prepared list: prints the plan, asks before reserving (without
 * --yes; refused where no one can answer), schedules the uploads with progress
 * on stderr, and prints each task id on stdout (or as JSON) in list order.
 * Returns each part's task in its latest state, or undefined for --dry-run.
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
    const fetchDeps = {
      client,
      product: prepared.product,
      sleep: ctx.sleep,
      signal: ctx.signal,
      onRestart: (error: Error) => ctx.printer.note(brokeOff(error)),
      onWait: (taskId: string, ms: number) => ctx.printer.note(notPublished(taskId, ms)),
    };
    // --timeout bounds the whole command: the schedule gets what is left of it.
    const timeoutMs = ctx.deadline.remainingMs();
    return {
      pollIntervalMs,
      untilFinished: Boolean(follow.wait),
      ...(timeoutMs === undefined ? {} : { timeoutMs, timeoutSeconds: ctx.deadline.seconds }),
      resumeCommand: commandLine(ctx.argv),
      waitResumes: !staging,
      onEvent: (event) => progress?.onEvent(event),
      ...(staging
        ? {
            onSucceeded: async (result: UploadResult) => {
              await fetchToStaging(fetchDeps, staging, result).catch((error: unknown) => {
                throw tasksGoOn(error);
              });
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
      onPlan: (plan) => {
        printer.note(`Plan: ${describePlan(plan)}.`);
        for (const line of countryPlanLines(plan, prepared)) printer.note(line);
        if (flags.dryRun && ctx.globals.json) printer.json(planJson(plan, prepared));
      },
      confirmReservation: flags.yes ? undefined : (micros, balance) => confirmReservation(ctx, micros, balance),
      onTask: (result) => reportTask(ctx, result, prepared, flags),
    },
    prepared,
    options,
  ).finally(() => progress?.stop());
  if (flags.dryRun) printer.note("Dry run: nothing was uploaded.");
  return uploaded;
}

/**
 * Money is reserved only with a yes: from --yes, or from a person at a terminal.
 * Where nobody can answer (stdin or stderr not a terminal: cron, a pipe, CI) the
 * run stops before uploading rather than spend silently.
 */
async function confirmReservation(ctx: Context, micros: number, balance: number): Promise<boolean> {
  const question = `Reserve ${formatUsd(micros)} of ${formatUsd(balance)}?`;
  if (canPrompt(ctx.io)) return confirm(ctx.io, question, { signal: ctx.signal, cancelled: { message: NOTHING_UPLOADED } });
  throw new UsageError(
    "No one can confirm the reservation here (stdin or stderr is not a terminal): add --yes to submit without a prompt.",
    {
      hint: `Nothing was uploaded. The reservation would be ${formatUsd(micros)} (balance ${formatUsd(balance)}).`,
    },
  );
}

/**
 * A task as submit --json prints it: the service's task object, whether the
 * service replayed an earlier submit of this list (nothing reserved again), and
 * the local preparation summary (the rows excluded before upload, which the
 * service's own counts never see). Null for a retry, which prepares nothing new.
 */
function submittedTaskJson({ task, replayed }: UploadResult, prepared: PreparedSubmission) {
  return { ...taskJson(task), replayed, preparation: prepared.entry.prepared ? snakeCaseKeys(prepared.entry.prepared) : null };
}

function reportTask(ctx: Context, result: UploadResult, prepared: PreparedSubmission, flags: SubmitFlags): void {
  const { task, replayed, upload } = result;
  const { printer } = ctx;
  const stdoutTaken = flags.output === "-" || flags.rejects === "-";
  if (ctx.globals.json && !stdoutTaken) printer.json(submittedTaskJson(result, prepared));
  else if (!ctx.globals.json && flags.output === undefined && !stdoutTaken) printer.data(task.id);
  else printer.note(`Task ${task.id} submitted.`);
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

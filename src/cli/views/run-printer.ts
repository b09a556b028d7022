import type { PrepareResult } from "../../prepare/index.js";
import { describeHolder } from "../../run/lease.js";
import { paddingMicros, uploadedNumbers, type InFlightTask } from "../../run/plan.js";
import type { RunEvent, RunOutcome } from "../../run/submit-request.js";
import { MICROS_PER_USD } from "../../spec/products.js";
import type { UploadResult } from "../../tasks/submit.js";
import { count } from "../../format-count.js";
import type { Context } from "../context.js";
import { snakeCaseKeys } from "../json-keys.js";
import { countryPlanLines, describePlan, inFlightNames, planJson, reuseLines, type PlanSubject } from "./plan-view.js";
import { createSubmitProgress, type Part, type SubmitProgress } from "./submit-progress.js";
import { taskJson } from "./task-view.js";

/** What of submit's and retry-failed's flags their runs' printer reads: --dry-run, and what takes stdout from the task ids. */
export interface RunPrinterFlags {
  dryRun?: boolean;
  /**
   * With --wait -o, the results are the data the user asked for: task ids go to
   * stdout only without -o (as JSON with --json, unless -o - takes stdout).
   */
  output?: string;
  /** --rejects: `-` takes stdout for the rejected rows, so task ids go to stderr. */
  rejects?: string;
  /** --changes FILE|-: what changed since the previous check of each number. */
  changes?: string;
}

/** What `--resubmit` says now that it does nothing. */
export const RESUBMIT_NOTE =
  "--resubmit is no longer needed and is ignored: once a run has finished, running the same command again checks the list again, except numbers checked or in a task in flight within --max-age (--max-age 0 checks every number again).";

/**
 * Prints a run's events as it goes: what preparation found, a run continued or
 * abandoned, the plan (and, with --dry-run --json, the plan as JSON on stdout), each
 * task id on stdout (or as JSON) in list order, and the schedule's progress on stderr.
 */
export function runPrinter(
  ctx: Context,
  flags: RunPrinterFlags,
  subject: PlanSubject,
  pollIntervalMs: number,
  onPrepared: (result: PrepareResult) => Promise<void>,
) {
  let progress: SubmitProgress | undefined;
  let prepared: PrepareResult | undefined;
  let tasksSubmitted = false;
  let progressChanges = Promise.resolve();
  /**
   * Stops the progress line shown, then starts one for `parts` if given. A run plans again
   * after waiting for another process (or after being overtaken by one): a line left
   * turning from the first plan kept the process alive after its summary, so each change
   * stops the line before it, in order (starting one loads ora, which takes a moment).
   */
  const replaceProgress = (parts?: readonly Part[]): void => {
    progressChanges = progressChanges.then(async () => {
      progress?.stop();
      progress = parts ? await createSubmitProgress(ctx, parts, pollIntervalMs) : undefined;
    });
  };
  const onEvent = (event: RunEvent): void => {
    switch (event.type) {
      case "continuing":
        ctx.printer.note(
          `Carrying on run ${event.run.id}, started ${event.run.startedAt} and not finished: its plan and keys, so nothing is uploaded or paid for twice (${event.tasks} task(s) submitted so far).`,
        );
        return;
      case "abandoned":
        ctx.printer.warn(
          `Run ${event.run.id} of this list ${flags.dryRun ? "would be" : "is"} abandoned: ${event.reason}. Its tasks' results still reach the ledger as they finish; a new run starts.`,
        );
        return;
      case "plan":
        ctx.printer.note(
          event.continued
            ? `Plan of the run carried on, as made when it began (its reservation was made then; only parts never uploaded reserve anything now): ${describePlan(event.plan, subject)}.`
            : `Plan: ${describePlan(event.plan, subject)}.`,
        );
        for (const line of reuseLines(event.plan)) ctx.printer.note(line);
        if (prepared) for (const line of countryPlanLines(event.plan, prepared)) ctx.printer.note(line);
        if (flags.dryRun && ctx.globals.json && prepared) ctx.printer.json(planJson(event.plan, subject, prepared));
        for (const task of flags.dryRun ? [] : (event.plan.inFlight?.tasks ?? [])) {
          tasksSubmitted = true;
          reportInFlight(ctx, task, flags, prepared);
        }
        replaceProgress(!flags.dryRun && event.plan.parts.length > 0 ? event.plan.parts : undefined);
        return;
      case "waiting for in flight":
        replaceProgress();
        ctx.printer.note(
          `Waiting: ${count(event.plan.waitingForInFlight ?? 0)} numbers need a result but are fewer than a task's minimum of ${count(event.plan.limits.minTaskSize)}, while ${count(event.plan.inFlight?.numbers ?? 0)} numbers of the list are in flight (${inFlightNames(event.plan.inFlight?.tasks ?? [])}): waiting for those tasks, then planning again with their results.`,
        );
        return;
      case "claimed meanwhile":
        ctx.printer.note("Another run claimed numbers of this product while this one planned: planning again, taking them as in flight.");
        return;
      case "task":
        tasksSubmitted = true;
        reportTask(ctx, event.result, event.runId, flags, prepared);
        return;
      case "schedule":
        progress?.onEvent(event.event);
        return;
      case "busy":
        // Nothing of this run moves while it waits: no line turns.
        replaceProgress();
        ctx.printer.note(
          `Run ${event.runId} of this list is being carried on by ${describeHolder(event.holder)}: waiting for it to let go, then carrying on what is left (--if-busy exit stops here with exit 10 instead).`,
        );
        return;
    }
  };
  return {
    onEvent,
    onPrepared: (result: PrepareResult): Promise<void> => {
      prepared = result;
      return onPrepared(result);
    },
    /** Whether a task of the run was submitted (or found submitted): from then on it goes on at the service, whatever fails here. */
    tasksSubmitted: () => tasksSubmitted,
    /** Stops the progress line, once what the events started is in place. */
    stop: async (): Promise<void> => {
      replaceProgress();
      await progressChanges;
    },
  };
}

/**
 * A task of another run whose results this run takes: its id is data like the run's own
 * tasks' (a script waits for it and downloads it the same way), marked as not this run's,
 * with this run's preparation as every task line of the run has it.
 */
function reportInFlight(ctx: Context, task: InFlightTask, flags: RunPrinterFlags, prepared: { summary: unknown } | undefined): void {
  const { printer } = ctx;
  const preparation = preparationJson(prepared?.summary);
  if (task.taskId === undefined) {
    // A claim: another run is uploading these numbers, and the service has not answered with a task id yet.
    if (ctx.globals.json && !takesStdout(flags))
      printer.json({ type: "claim", in_flight: true, submitted_by_run: task.runId ?? null, preparation });
    else
      printer.note(
        `Numbers claimed by ${task.runId ? `run ${task.runId}` : "another run"}, whose upload is under way: this run takes their results.`,
      );
  } else if (ctx.globals.json && !takesStdout(flags)) {
    printer.json({ type: "task", id: task.taskId, in_flight: true, submitted_by_run: task.runId ?? null, preparation });
  } else if (!ctx.globals.json && flags.output === undefined && !takesStdout(flags)) printer.data(task.taskId);
  else
    printer.note(
      `Task ${task.taskId} (submitted by ${task.runId ? `run ${task.runId}` : "another run"}, in flight): this run takes its results.`,
    );
}

/**
 * A task as submit --json prints it: the service's task object, whether the service
 * replayed an earlier submit of the run (nothing reserved again), and the local
 * preparation summary (the rows excluded before upload, which the service's own counts
 * never see).
 */
function submittedTaskJson({ task, replayed, upload }: UploadResult, runId: string, summary: unknown) {
  return {
    type: "task",
    run: runId,
    ...taskJson(task),
    replayed,
    carried_on: upload.knownTask !== undefined,
    preparation: preparationJson(summary),
  };
}

/** What preparation found in the list, as every line of submit --json about a run or its tasks carries it. */
function preparationJson(summary: unknown) {
  return summary === undefined ? null : snakeCaseKeys(summary);
}

/** Whether the flags give stdout to data other than task ids (-o -, --rejects -, --changes -). */
export function takesStdout(flags: RunPrinterFlags): boolean {
  return flags.output === "-" || flags.rejects === "-" || flags.changes === "-";
}

/**
 * The last object `submit --json` prints: the run, what it uploaded, reused and saved,
 * the tasks of other runs whose results it took, and what preparation found in the list
 * (the one line a run that uploads nothing prints).
 */
export function runJson({
  run,
  plan,
  results,
  inFlight,
  prepared,
}: Pick<RunOutcome, "run" | "plan" | "results" | "inFlight" | "prepared">) {
  return {
    type: "run",
    run: run.id,
    kept: plan.kept,
    uploaded: uploadedNumbers(plan),
    padded: plan.padded,
    padded_micros: paddingMicros(plan),
    padded_usd: paddingMicros(plan) / MICROS_PER_USD,
    reused: plan.reused,
    no_result: plan.noResult ?? 0,
    in_flight: plan.inFlight?.numbers ?? 0,
    waiting: plan.waiting ?? 0,
    tasks: results.map((result) => result.task.id),
    in_flight_tasks: inFlight.flatMap((task) => (task.taskId === undefined ? [] : [task.taskId])),
    reservation_micros: plan.reservationMicros,
    reservation_usd: plan.reservationMicros / MICROS_PER_USD,
    saved_micros: plan.savedMicros,
    saved_usd: plan.savedMicros / MICROS_PER_USD,
    preparation: preparationJson(prepared.summary),
  };
}

function reportTask(
  ctx: Context,
  result: UploadResult,
  runId: string,
  flags: RunPrinterFlags,
  prepared: { summary: unknown } | undefined,
): void {
  const { task, replayed, upload } = result;
  const { printer } = ctx;
  // Known now, so a run that fails later still names its tasks to --on-done and --notify.
  ctx.outcome.run = runId;
  ctx.outcome.addTasks([task.id]);
  if (ctx.globals.json && !takesStdout(flags)) printer.json(submittedTaskJson(result, runId, prepared?.summary));
  else if (!ctx.globals.json && flags.output === undefined && !takesStdout(flags)) printer.data(task.id);
  else printer.note(upload.knownTask ? `Task ${task.id}: submitted earlier by this run, carried on.` : `Task ${task.id} submitted.`);
  if (replayed && upload.knownTask === undefined) {
    printer.note(
      `Task ${task.id} had already been created for this run by an earlier attempt whose answer was lost; the service returned it and nothing was reserved twice.`,
    );
  }
}

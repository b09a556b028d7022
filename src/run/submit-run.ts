import { randomBytes } from "node:crypto";
import { hostname, userInfo } from "node:os";
import { ApiError } from "../api/errors.js";
import type { ApiClient } from "../api/types.js";
import type { Limits } from "../config/resolve.js";
import { BulkcheckError, InputRejectedError, InsufficientBalanceError, InterruptedError, TaskFailedError } from "../errors.js";
import type { IdentifierSet } from "../prepare/identifier-set.js";
import { prepareList, type PrepareOptions, type PrepareResult } from "../prepare/index.js";
import { ApiCode } from "../spec/codes.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { Lease, RunRecord, RunSource, Scope, Store, TaskRecord } from "../store/store.js";
import { readSourceFile } from "../tasks/source-check.js";
import { legacyIdentity } from "../store/journal-import.js";
import { count } from "../format-count.js";
import { formatUsd } from "../tasks/cost.js";
import { runSchedule, type ScheduleEvent } from "../tasks/schedule.js";
import type { PlannedUpload, UploadResult } from "../tasks/submit.js";
import { partKey, runIdentity, type RunCommand } from "./identity.js";
import { RunBusyError, RunLease } from "./lease.js";
import { planRun, samePlan, type InFlightTask, type PlannedRun, type RunPlan } from "./plan.js";
import { followInFlight } from "./in-flight.js";
import type { ResultRecording } from "../ledger/recording.js";
import { identifierBatches, type PadPolicy } from "../ledger/reuse.js";
import { inUploadSlot, noteTaskState, uploadPart } from "./uploads.js";

/** What one `submit` asks for. */
export interface SubmitRunOptions {
  /** What makes this command the same command as an earlier one (see runIdentity). */
  command: RunCommand;
  product: ServiceType;
  /** The task country; undefined under --country auto (each part has its own) and for carrier_batch without --country. */
  country: string | undefined;
  /** Preparation as the flags ask: the source, country, column, and the rest. */
  prepare: Omit<PrepareOptions, "outputDir" | "uploadPath" | "maxTaskSize" | "countryTasks">;
  /** The list made otherwise than by preparing a source (retry-failed's numbers without a result), instead of `prepare`. */
  lists?: (workDir: string) => Promise<{ value: PrepareResult; source: RunSource }>;
  /** --idempotency-key: the parts' keys, numbered when split, instead of keys derived from the run. */
  userKey?: string;
  dryRun: boolean;
  maxCostMicros?: number;
  /** Answers younger than this are reused (0: only those given since this command began); ignored without the ledger. */
  maxAgeMs: number;
  ledger: boolean;
  /** When the numbers that need a result are too few for a task: fill it with the oldest fresh results, or let them wait. */
  pad: PadPolicy;
  /** Upload the numbers checked without a result within maxAgeMs too (--retry-no-result). */
  retryNoResult: boolean;
  /**
   * Whether numbers in flight and numbers answered without a result count as checked (a
   * submit), or only results do (retry-failed: its numbers are those a task answered without
   * a result, and only a fresh result elsewhere spares one).
   */
  countUnanswered: boolean;
  /** Wait until every task has finished, or only until every part is uploaded. */
  wait: boolean;
  pollIntervalMs: number;
  timeoutMs?: number;
  timeoutSeconds?: number;
  /** The command that carries on, for the hints of errors that stop the run. */
  resumeCommand: string;
  /** When another process holds this command's run: wait until it lets go (default), or stop with RunBusyError (exit 10). */
  ifBusy?: "wait" | "exit";
}

/** What a run tells its caller as it goes, in order. */
export type RunEvent =
  | { type: "continuing"; run: RunRecord; tasks: number }
  /** The run's list changed: it is abandoned (with --dry-run: it would be). */
  | { type: "abandoned"; run: RunRecord; reason: string }
  | { type: "plan"; plan: RunPlan; continued: boolean }
  | { type: "task"; result: UploadResult; runId: string }
  | { type: "schedule"; event: ScheduleEvent }
  | { type: "imported"; runs: number; tasks: number }
  /** Another process holds this command's run: this one waits until it lets go (announced once). */
  | { type: "busy"; runId: string; holder: Lease };

export interface SubmitRunDeps {
  store: Store;
  scope: Scope;
  client: () => Promise<ApiClient>;
  limits: Limits;
  priceMicros: number;
  /** A private directory for the prepared list and the parts' files, removed by the caller. */
  workDir: string;
  lease: Lease;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  signal: AbortSignal;
  /** Asked before money is reserved; without it (--yes) the reservation goes ahead. True goes ahead. */
  confirm?: (reservationMicros: number, balanceMicros: number) => Promise<boolean>;
  /**
   * Called when another process's run of this command has let go, before this one plans
   * again (and before any request): e.g. to find that it wrote this command's output meanwhile.
   */
  onBusyEnded?: () => Promise<void>;
  /** Told what preparation found, before anything is planned; the run waits for it. */
  onPrepared?: (result: PrepareResult) => Promise<void>;
  onEvent: (event: RunEvent) => void;
  /** Where the results of tasks in flight that the run follows go into the ledger (off this thread). */
  recording: ResultRecording;
  /** Called once for each task seen succeeded while the run waits, e.g. to fetch and record its result. */
  onSucceeded?: (result: UploadResult, run: RunRecord) => Promise<void>;
}

/** Where a run stands once its parts are uploaded (and, when waiting, finished). */
export interface RunOutcome {
  run: RunRecord;
  plan: RunPlan;
  /** Each part's task in its latest state, in list order. */
  results: UploadResult[];
  /** The numbers the ledger serves, each with the store reference of the task whose result it takes. */
  reused: IdentifierSet;
  /** The ledger's tasks those results come from (tasks in flight among them, once they have finished), each with when it was checked. */
  reusedTasks: ReadonlyMap<number, string>;
  /** Tasks of other runs, in flight when this one was planned, whose results it takes. */
  inFlight: readonly InFlightTask[];
  prepared: PrepareResult;
  lease: RunLease;
}

/**
 * One `submit`, from the list to its tasks: prepares the list; continues this command's
 * unfinished run if there is one (its journalled plan, its keys, its tasks) or plans a new
 * one (reusing fresh ledger results); checks the money before anything is reserved; writes
 * the run and its parts' keys before the first upload; and schedules the uploads (and,
 * with `wait`, follows the tasks to the end). Undefined for a dry run. The caller writes
 * the output and then finishes the run (finishRun), or leaves it open for the next run of
 * the same command to carry on.
 */
export async function submitRun(options: SubmitRunOptions, deps: SubmitRunDeps): Promise<RunOutcome | undefined> {
  const startedAt = deps.now();
  let announced = false;
  for (;;) {
    try {
      if (announced) await deps.onBusyEnded?.();
      const outcome = await attemptRun(options, deps, startedAt);
      if (outcome !== OVERTAKEN) return outcome;
    } catch (error) {
      if (!(error instanceof RunBusyError) || options.ifBusy === "exit") throw error;
      // Two cron jobs of one list overlapping: the second follows the first instead of failing, and
      // then carries on what is left (or, the run finished, starts a new one served by the ledger).
      if (!announced) deps.onEvent({ type: "busy", runId: error.runId, holder: error.holder });
      announced = true;
      await deps.sleep(BUSY_POLL_MS, deps.signal);
    }
  }
}

/** How often a run held by another process is looked at again. */
const BUSY_POLL_MS = 2000;

async function attemptRun(
  options: SubmitRunOptions,
  deps: SubmitRunDeps,
  startedAt: number,
): Promise<RunOutcome | undefined | typeof OVERTAKEN> {
  const { store, scope } = deps;
  const identity = runIdentity(scope, options.command);
  const finishedBefore = await finishedRuns(store, scope, identity);
  let open = await store.openRun(scope, identity);
  // A dry run changes nothing, a run's lease included.
  const claim = async (run: RunRecord) => (options.dryRun ? undefined : RunLease.claim(store, run, deps.lease, deps.now));
  let lease = open && (await claim(open));
  /** The run being worked on, once one is (continued or created). */
  let active: RunRecord | undefined;
  try {
    const { value: prepared, source } = await prepare(options, deps, (open?.plan as RunPlan | undefined)?.limits ?? deps.limits);
    // What preparation found is said before the plan (and any question about money).
    await deps.onPrepared?.(prepared);
    if (!open) {
      open = await legacyRun(store, scope, options, prepared);
      lease = open && (await claim(open));
      if (open && !options.dryRun) await store.updateRun(open.id, { identity });
    }
    if (open) {
      active = options.dryRun ? undefined : open;
      const continued = await continueRun(open, prepared, options, deps, startedAt);
      if (continued === "dry run") return undefined;
      if (continued) {
        // The same numbers, perhaps from a file touched since: the run now stands for the file as read.
        await store.updateRun(open.id, { source });
        return { ...continued, prepared, lease: lease! };
      }
      await lease?.release();
      lease = undefined;
      active = undefined;
    }
    const planned = await planRun({
      lists: prepared.chunks,
      limits: { minTaskSize: deps.limits.minTaskSize, maxTaskSize: deps.limits.maxTaskSize, maxFileBytes: deps.limits.maxFileBytes },
      priceMicros: deps.priceMicros,
      dir: deps.workDir,
      // An answer given since this command began is always fresh: a command that waited for another run of itself
      // takes that run's results, whatever --max-age says. Older ones are fresh within --max-age; with --max-age 0 none
      // is, but the plan still says what reusing them would save.
      ...(options.ledger
        ? {
            reuse: {
              store,
              scope,
              product: options.product,
              rule: {
                maxAgeMs: options.maxAgeMs,
                freshSince: new Date(freshSince(options.maxAgeMs, deps.now(), startedAt)).toISOString(),
                asOfTaskRef: await store.maxTaskRef(),
                ...(options.countUnanswered ? { inFlight: "now" as const } : {}),
                pad: options.pad,
                retryNoResult: options.retryNoResult,
              },
            },
          }
        : {}),
    });
    deps.onEvent({ type: "plan", plan: planned.plan, continued: false });
    checkPlan(planned.plan, options);
    if (options.dryRun) return undefined;
    await reserve(planned.plan.reservationMicros, deps);
    const created = await createRun(options, deps, identity, { ...prepared, source }, planned);
    lease = created.lease;
    const overtaken = [...(await finishedRuns(store, scope, identity))].find((id) => !finishedBefore.has(id));
    if (overtaken) {
      // Another process ran this command from start to end while this one prepared and planned: its
      // results are in the ledger now, and this plan (made without them) would pay for them again.
      await store.updateRun(created.run.id, {
        state: "abandoned",
        finishedAt: new Date(deps.now()).toISOString(),
        note: `run ${overtaken} of the same command finished while this one was being planned; planned again`,
      });
      await created.lease.release();
      return OVERTAKEN;
    }
    active = created.run;
    const rows = await addParts(store, created.run, planned, options, deps.now);
    const results = await schedule(created.run, planned, rows, new Map(), options, deps);
    return { run: created.run, plan: planned.plan, results, ...(await takeInFlight(planned, options, deps, startedAt)), prepared, lease };
  } catch (error) {
    // A failed task has no result, ever: its run can never write its output, so it ends here and the next run checks the list again.
    if (active && error instanceof TaskFailedError) {
      await store.updateRun(active.id, { state: "failed", finishedAt: new Date(deps.now()).toISOString(), note: error.message });
    } else if (active && endsUnpaidRun(error) && !(await store.tasksOfRun(active.id)).some((task) => task.taskId)) {
      // Refused before any task existed (the list, the key, the balance): nothing to carry on, and the next run plans afresh.
      await store.updateRun(active.id, {
        state: "abandoned",
        finishedAt: new Date(deps.now()).toISOString(),
        note: (error as Error).message,
      });
    }
    await lease?.release();
    throw error;
  }
}

/**
 * Prepares the list: whole, or one list per country under --country auto (countries
 * too small for a task left out), with the source file's fingerprint taken around it,
 * so the run records exactly which file it read.
 */
async function prepare(
  options: SubmitRunOptions,
  deps: SubmitRunDeps,
  limits: RunPlan["limits"],
): Promise<{ value: PrepareResult; source: RunSource }> {
  if (options.lists) return options.lists(deps.workDir);
  return readSourceFile(options.command.sourcePath, () =>
    prepareList({
      ...options.prepare,
      outputDir: deps.workDir,
      ...(options.prepare.anyRegion ? { countryTasks: { minTaskSize: limits.minTaskSize, maxTaskSize: Number.MAX_SAFE_INTEGER } } : {}),
      signal: deps.signal,
    }),
  );
}

/**
 * A run of 0.1 imported from its journal (see importLegacyJournal) that read the same
 * source the same way: this command's unfinished run. 0.1 kept no flags, so it is found
 * by what they resolved to.
 */
async function legacyRun(store: Store, scope: Scope, options: SubmitRunOptions, prepared: PrepareResult): Promise<RunRecord | undefined> {
  const countryMode = options.prepare.anyRegion ? "auto" : options.country;
  const legacy = await store.openRun(scope, legacyIdentity(scope, options.command.sourcePath, options.product, countryMode));
  return legacy && sameSettings(legacy.settings, prepared.settings) ? legacy : undefined;
}

/** Settings as far as they decide which numbers are kept (a run of 0.1 recorded no country grouping's sizes the same way). */
function sameSettings(a: unknown, b: unknown): boolean {
  const comparable = (settings: unknown) => {
    const { countryGroups: _groups, digitsAs, ...rest } = (settings ?? {}) as Record<string, unknown>;
    return JSON.stringify({ ...rest, digitsAs: digitsAs ?? "international" });
  };
  return comparable(a) === comparable(b);
}

/**
 * Carries on an unfinished run with its journalled plan: the list must still keep the
 * same numbers and split into the same parts, or the run is abandoned (its tasks' results
 * still reach the ledger as they finish) and undefined is returned for a new run.
 */
async function continueRun(
  run: RunRecord,
  prepared: PrepareResult,
  options: SubmitRunOptions,
  deps: SubmitRunDeps,
  startedAt: number,
): Promise<Omit<RunOutcome, "prepared" | "lease"> | "dry run" | undefined> {
  const { store } = deps;
  const tasks = await store.tasksOfRun(run.id);
  const journalled = (run.plan as RunPlan | undefined) ?? legacyPlan(tasks, deps.priceMicros, run.country === "auto");
  const again = await planRun({
    lists: prepared.chunks,
    limits: journalled.limits,
    priceMicros: journalled.priceMicros,
    dir: deps.workDir,
    ...(journalled.reuse ? { reuse: { store, scope: deps.scope, product: options.product, rule: journalled.reuse } } : {}),
  });
  const reason =
    run.plan && journalled.list !== again.plan.list
      ? "the list keeps other numbers than when the run began"
      : !samePlan(journalled, again.plan)
        ? "its parts could not be made again as planned (the ledger results it reused have changed)"
        : undefined;
  if (reason) {
    if (!options.dryRun) {
      await store.updateRun(run.id, { state: "abandoned", finishedAt: new Date(deps.now()).toISOString(), note: reason });
    }
    deps.onEvent({ type: "abandoned", run, reason });
    return undefined;
  }
  deps.onEvent({ type: "continuing", run, tasks: tasks.filter((task) => task.taskId).length });
  deps.onEvent({ type: "plan", plan: journalled, continued: true });
  if (options.dryRun) return "dry run";
  const rows = await addParts(store, run, { plan: journalled, files: again.files }, options, deps.now, tasks);
  const known = await knownTasks(await deps.client(), rows, deps);
  const unknown = rows.filter((row) => !known.has(row.ref));
  await reserve(unknown.reduce((sum, row) => sum + (row.count ?? 0), 0) * journalled.priceMicros, deps);
  const results = await schedule(run, again, rows, known, options, deps);
  return { run, plan: journalled, results, ...(await takeInFlight(again, options, deps, startedAt)) };
}

/** A run of 0.1 planned nothing: its parts are its plan (with a country of their own only under --country auto). */
function legacyPlan(tasks: readonly TaskRecord[], priceMicros: number, byCountry: boolean): RunPlan {
  const parts = tasks.map((task, index) => ({
    index,
    count: task.count ?? 0,
    bytes: 0,
    sha256: task.sha256 ?? "",
    ...(byCountry && task.country !== undefined ? { country: task.country } : {}),
  }));
  const uploaded = parts.reduce((sum, part) => sum + part.count, 0);
  return {
    version: 1,
    list: "",
    kept: uploaded,
    reused: 0,
    padded: 0,
    parts,
    limits: { minTaskSize: 1, maxTaskSize: Math.max(1, ...parts.map((part) => part.count)), maxFileBytes: Number.MAX_SAFE_INTEGER },
    priceMicros,
    reservationMicros: uploaded * priceMicros,
    savedMicros: 0,
  };
}

/** The oldest answer a plan counts as fresh: within --max-age, or given after this command began (a run of the same instant is an earlier one). */
function freshSince(maxAgeMs: number, now: number, startedAt: number): number {
  return maxAgeMs === 0 ? startedAt + 1 : Math.min(now - maxAgeMs, startedAt + 1);
}

/** A run stopped by a refusal, not by something that passes (a timeout, Ctrl-C, a service down, another process). */
function endsUnpaidRun(error: unknown): boolean {
  return error instanceof BulkcheckError && ["input", "auth", "balance", "usage"].includes(error.kind);
}

/** Refuses, before anything is reserved, a plan the service cannot take or the user would not pay for. */
function checkPlan(plan: RunPlan, options: SubmitRunOptions): void {
  if (plan.kept === 0) {
    throw new InputRejectedError("No number in the list can be checked, so nothing was uploaded.", {
      hint: "See why with --rejects rejects.csv, or bulkcheck validate.",
    });
  }
  const small = plan.parts.find((part) => part.count < plan.limits.minTaskSize);
  if (small && options.command.retryOf !== undefined) {
    throw tooFewToRetry(options.command.retryOf, small.count, plan.limits.minTaskSize, options.command.sourcePath);
  }
  if (small) {
    throw new InputRejectedError(
      `A task needs at least ${count(plan.limits.minTaskSize)} numbers; this list has ${count(small.count)} to check.`,
      { hint: "Add numbers, or if your account allows smaller tasks: bulkcheck config set min-task-size N" },
    );
  }
  const large = plan.parts.find((part) => part.bytes > plan.limits.maxFileBytes);
  if (large) {
    throw new InputRejectedError(
      `The upload file would be ${count(large.bytes)} bytes, over the service's limit of ${count(plan.limits.maxFileBytes)}.`,
      { hint: "Lower max-task-size so the list is split into smaller tasks: bulkcheck config set max-task-size N" },
    );
  }
  if (options.maxCostMicros !== undefined && plan.reservationMicros > options.maxCostMicros) {
    throw new InsufficientBalanceError(
      `The reservation ${formatUsd(plan.reservationMicros)} is over --max-cost ${formatUsd(options.maxCostMicros)}.`,
      { hint: "Raise --max-cost, or split the list." },
    );
  }
}

/**
 * A retry below the service's minimum task size: nothing the user can add to it, since it
 * holds exactly the numbers that got no result. Say so, and what can be done instead.
 */
function tooFewToRetry(taskId: string, numbers: number, minTaskSize: number, sourcePath: string | undefined): InputRejectedError {
  const list = sourcePath ?? "the list";
  return new InputRejectedError(
    `The ${count(numbers)} numbers of task ${taskId} that got no result cannot be retried on their own: the service's minimum task size is ${count(minTaskSize)} numbers, so nothing was uploaded.`,
    {
      hint: `Keep them for the next run: they are still in ${list}, and the next run of it uploads every number without a fresh result, these included. If your account allows smaller tasks: bulkcheck config set min-task-size N`,
    },
  );
}

/**
 * Money is reserved only when the balance covers it and someone said yes: --yes, or a
 * person at a terminal. Checked whenever anything is to be uploaded, a continued run's
 * parts that never reached the service included.
 */
async function reserve(micros: number, deps: SubmitRunDeps): Promise<void> {
  if (micros === 0) return;
  const client = await deps.client();
  const { balance_micros } = await client.getBalance();
  if (balance_micros < micros) {
    throw new InsufficientBalanceError(`The balance ${formatUsd(balance_micros)} cannot cover the reservation of ${formatUsd(micros)}.`, {
      hint: "Top up the account, or submit a smaller list.",
    });
  }
  if (deps.confirm && !(await deps.confirm(micros, balance_micros))) throw new InterruptedError("Cancelled; nothing was uploaded.");
}

/** Records the new run (open, leased to this process); another process that opened the same command's run first wins. */
async function createRun(
  options: SubmitRunOptions,
  deps: SubmitRunDeps,
  identity: string,
  prepared: PrepareResult & { source: RunSource },
  planned: PlannedRun,
): Promise<{ run: RunRecord; lease: RunLease }> {
  const { store, scope } = deps;
  const startedAt = new Date(deps.now()).toISOString();
  const run = await store.createRun(
    {
      id: newRunId(deps.now()),
      scope,
      identity,
      kind: options.command.retryOf ? "retry" : "submit",
      state: "open",
      startedAt,
      product: options.product,
      ...(options.prepare.anyRegion ? { country: "auto" } : options.country ? { country: options.country } : {}),
      source: prepared.source,
      settings: prepared.settings,
      prepared: prepared.summary,
      plan: planned.plan,
      ...hostAndUser(),
    },
    deps.lease,
  );
  if (run === "exists") {
    // Another process opened this command's run a moment ago, and holds it.
    const other = await store.openRun(scope, identity);
    throw new RunBusyError(other?.id ?? "?", other?.lease ?? deps.lease);
  }
  return { run, lease: RunLease.created(store, run.id, deps.lease, deps.now) };
}

/**
 * The run's task rows, one per planned part, each with its idempotency key and (with the
 * ledger) its numbers: written before any upload, so a run planned meanwhile, here or on
 * another machine, counts them in flight. A continued run writes the numbers of a part that
 * has none: stopped between the two writes, or begun by an earlier release.
 */
async function addParts(
  store: Store,
  run: RunRecord,
  planned: Pick<PlannedRun, "plan" | "files">,
  options: SubmitRunOptions,
  now: () => number,
  existing: readonly TaskRecord[] = [],
): Promise<TaskRecord[]> {
  const { plan } = planned;
  const rows: TaskRecord[] = [];
  const withNumbers = async (row: TaskRecord) => {
    if (options.ledger) await addNumbers(store, row.ref, planned.files[row.part ?? 0]!.path);
    rows.push(row);
  };
  for (const part of plan.parts) {
    const found = existing.find((task) => task.part === part.index);
    // A part that has its numbers keeps them as they are: a number forgotten since (ledger forget) stays forgotten.
    if (found && (await hasNumbers(store, found.ref))) rows.push(found);
    else if (found) await withNumbers(found);
    if (found) continue;
    const key = options.userKey ? userPartKey(options.userKey, part.index, plan.parts.length) : partKey(run.id, part.index, part.sha256);
    const taken = await store.taskWithKey(run.scope, key);
    if (taken) throw keyUsedBefore(key, taken);
    await withNumbers(
      await store.addTask({
        scope: run.scope,
        runId: run.id,
        part: part.index,
        parts: plan.parts.length,
        idempotencyKey: key,
        product: options.product,
        ...((part.country ?? options.country) ? { country: part.country ?? options.country } : {}),
        count: part.count,
        sha256: part.sha256,
        submittedAt: new Date(now()).toISOString(),
        ...(options.command.retryOf ? { retryOf: options.command.retryOf } : {}),
      }),
    );
  }
  return rows;
}

/** Whether the store has a task's numbers (read no further than the first batch). */
async function hasNumbers(store: Store, ref: number): Promise<boolean> {
  for await (const numbers of store.taskNumbers(ref)) return numbers.length > 0;
  return false;
}

/** Writes the numbers of a part's file as its task's, a batch at a time. */
async function addNumbers(store: Store, ref: number, path: string): Promise<void> {
  for await (const identifiers of identifierBatches(path)) await store.addTaskNumbers(ref, identifiers);
}

/**
 * With --wait, the tasks in flight whose results the run takes are followed to their end
 * (after its own, which were submitted later) and their results made sure of in the
 * ledger; then they are reused like any ledger result. Without, they are only named.
 */
async function takeInFlight(
  planned: PlannedRun,
  options: SubmitRunOptions,
  deps: SubmitRunDeps,
  startedAt: number,
): Promise<Pick<RunOutcome, "reused" | "reusedTasks" | "inFlight">> {
  const inFlight = planned.plan.inFlight?.tasks ?? [];
  const taken = { reused: planned.reused, reusedTasks: planned.reusedTasks, inFlight };
  if (!options.wait || inFlight.length === 0) return taken;
  const left = options.timeoutMs === undefined ? undefined : Math.max(0, startedAt + options.timeoutMs - deps.now());
  const checkedAt = await followInFlight({ ...deps, client: await deps.client(), product: options.product }, inFlight, {
    pollIntervalMs: options.pollIntervalMs,
    ...(left === undefined ? {} : { timeoutMs: left }),
    ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
    resumeCommand: options.resumeCommand,
    waitResumes: false,
  });
  return { ...taken, reusedTasks: new Map([...planned.reusedTasks, ...checkedAt]) };
}

/** A user's key covers one task; with several parts each gets a numbered suffix. */
function userPartKey(key: string, index: number, parts: number): string {
  return parts === 1 ? key : `${key}-${index + 1}`;
}

function keyUsedBefore(key: string, earlier: TaskRecord): InputRejectedError {
  const task = earlier.taskId ? `task ${earlier.taskId}` : "no task id recorded";
  return new InputRejectedError(
    `The idempotency key "${key}" was used on ${earlier.submittedAt ?? "an earlier day"} (${task}${earlier.runId ? `, run ${earlier.runId}` : ""}). ` +
      "The service would return that task instead of checking this list, so nothing was uploaded.",
    { hint: "Give each run its own --idempotency-key (for example with the date in it), or leave it out: every run derives its own." },
  );
}

/**
 * The tasks this run's parts already have, checked now: a task the service no longer
 * knows (a restarted sandbox, another account's key) is uploaded again, after the same
 * money checks as any upload.
 */
async function knownTasks(
  client: Pick<ApiClient, "checkTask">,
  rows: readonly TaskRecord[],
  deps: SubmitRunDeps,
): Promise<Map<number, Task>> {
  const known = new Map<number, Task>();
  for (const row of rows) {
    if (!row.taskId) continue;
    try {
      const task = await client.checkTask(row.taskId);
      await noteTaskState(deps.store, row.ref, task, deps.now);
      known.set(row.ref, task);
    } catch (error) {
      if (!(error instanceof ApiError && error.apiCode === ApiCode.UNSUPPORTED_OR_CONFLICT)) throw error;
    }
  }
  return known;
}

/** Uploads what has no task yet and follows the tasks: until every part is uploaded, or with `wait` until every task has finished. */
async function schedule(
  run: RunRecord,
  planned: PlannedRun,
  rows: readonly TaskRecord[],
  known: ReadonlyMap<number, Task>,
  options: SubmitRunOptions,
  deps: SubmitRunDeps,
): Promise<UploadResult[]> {
  const client = await deps.client();
  const uploads: PlannedUpload[] = planned.files.map((file, index) => {
    const row = rows[index]!;
    const task = known.get(row.ref);
    return {
      ...file,
      index,
      of: planned.files.length,
      idempotencyKey: row.idempotencyKey!,
      ref: row.ref,
      ...(row.submittedAt ? { keyWrittenAt: row.submittedAt } : {}),
      ...(task ? { knownTask: task } : {}),
    };
  });
  const refOfTask = new Map<string, number>();
  for (const row of rows) if (row.taskId) refOfTask.set(row.taskId, row.ref);
  const context = { client, store: deps.store, product: options.product, country: options.country, now: deps.now };
  const waiting = new Map<number, UploadResult>();
  let next = 0;
  return runSchedule({
    client: {
      // Every check the schedule makes is kept in the store: the first to see a task succeeded dates its results.
      checkTask: async (id) => {
        const task = await client.checkTask(id);
        const ref = refOfTask.get(id);
        if (ref !== undefined) await noteTaskState(deps.store, ref, task, deps.now);
        return task;
      },
    },
    uploads,
    upload: async (upload) => {
      const slot = { ...deps, maxInFlight: deps.limits.maxInFlight };
      const result = await inUploadSlot(slot, upload.ref, () =>
        uploadPart({ ...context, ...(options.command.retryOf ? { retryOf: options.command.retryOf } : {}) }, upload),
      );
      refOfTask.set(result.task.id, upload.ref);
      return result;
    },
    now: deps.now,
    sleep: deps.sleep,
    random: deps.random,
    signal: deps.signal,
    maxInFlight: deps.limits.maxInFlight,
    pollIntervalMs: options.pollIntervalMs,
    untilFinished: options.wait,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
    resumeCommand: options.resumeCommand,
    waitResumes: deps.onSucceeded === undefined,
    onEvent(event) {
      // Tasks are reported in list order, each as soon as those before it are known.
      if (event.type === "uploaded") {
        waiting.set(event.result.upload.index, event.result);
        for (let ready = waiting.get(next); ready; ready = waiting.get(next)) {
          waiting.delete(next++);
          deps.onEvent({ type: "task", result: ready, runId: run.id });
        }
      }
      deps.onEvent({ type: "schedule", event });
    },
    ...(deps.onSucceeded ? { onSucceeded: (result: UploadResult) => deps.onSucceeded!(result, run) } : {}),
  }).finally(() => {
    // After a failure, still report every task that was created, in list order.
    for (const index of [...waiting.keys()].sort((a, b) => a - b))
      deps.onEvent({ type: "task", result: waiting.get(index)!, runId: run.id });
  });
}

/** Ends a run: its output is written (or, without one, its tasks are submitted or finished as asked). */
export async function finishRun(
  store: Store,
  outcome: Pick<RunOutcome, "run" | "lease">,
  now: () => number,
  output?: unknown,
): Promise<void> {
  await store.updateRun(outcome.run.id, { state: "finished", finishedAt: new Date(now()).toISOString(), ...(output ? { output } : {}) });
  await outcome.lease.release();
}

/** Ends a run that cannot finish (its output could not be written), with the reason: the next run of the command starts afresh. */
export async function failRun(store: Store, outcome: Pick<RunOutcome, "run" | "lease">, now: () => number, error: unknown): Promise<void> {
  const reason = error instanceof Error ? error.message : String(error);
  await store.updateRun(outcome.run.id, { state: "failed", finishedAt: new Date(now()).toISOString(), note: reason });
  await outcome.lease.release();
}

/** How many of the latest runs are looked through for one of the same command that finished meanwhile. */
const RECENT_RUNS = 50;

/** The ids of the latest finished runs of a command. */
async function finishedRuns(store: Store, scope: Scope, identity: string): Promise<Set<string>> {
  const runs = await store.runs({ scope, limit: RECENT_RUNS });
  return new Set(runs.filter((run) => run.identity === identity && run.state === "finished").map((run) => run.id));
}

/** What an attempt returns when a run of the same command finished while it planned: it is planned again at once. */
const OVERTAKEN = Symbol("overtaken");

/** A run id people can read, sort and type: when it began (UTC), and a random tail. */
function newRunId(nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

function hostAndUser(): { host?: string; user?: string } {
  try {
    return { host: hostname(), user: userInfo().username };
  } catch {
    return { host: hostname() };
  }
}

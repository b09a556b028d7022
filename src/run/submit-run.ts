import { randomBytes } from "node:crypto";
import { planOf } from "./run-record.js";
import { hostname, userInfo } from "node:os";
import { BulkcheckError, TaskFailedError } from "../errors.js";
import { prepareList, type PrepareResult } from "../prepare/index.js";
import type { RunRecord, RunSource, Store, TaskRecord } from "../store/store.js";
import { readSourceFile } from "../tasks/source-check.js";
import { legacyRunOf } from "../store/journal-import.js";
import { checkFunds } from "./funds.js";
import { runIdentity } from "./identity.js";
import { claimParts, liveClaimants } from "./claims.js";
import { followInFlight } from "./in-flight.js";
import { knownTasks } from "./known-tasks.js";
import { RunBusyError, RunLease } from "./lease.js";
import { addParts } from "./part-keys.js";
import { checkPlan } from "./plan-checks.js";
import { withLongerMaxAge } from "./longer-max-age.js";
import { paddingMicros, planRun, samePlan, type PlanInput, type PlannedRun, type RunPlan } from "./plan.js";
import { scheduleRunParts } from "./schedule-parts.js";
import type { RunOutcome, SubmitRequest, SubmitRunDeps } from "./submit-request.js";

/**
 * One `submit`, from the list to its tasks: prepares the list; continues this command's
 * unfinished run if there is one (its journalled plan, its keys, its tasks) or plans a new
 * one (reusing fresh ledger results); checks the money before anything is reserved; writes
 * the run and its parts' keys before the first upload; and schedules the uploads (and,
 * with `wait`, follows the tasks to the end). Undefined for a dry run. The caller writes
 * the output and then finishes the run (finishRun), or leaves it open for the next run of
 * the same command to carry on.
 */
export async function submitRun(options: SubmitRequest, deps: SubmitRunDeps): Promise<RunOutcome | undefined> {
  const startedAt = options.startedAt ?? deps.now();
  let announced = false;
  for (;;) {
    try {
      if (announced) await deps.onBusyEnded?.();
      return await attemptRun(options, deps, startedAt);
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

async function attemptRun(options: SubmitRequest, deps: SubmitRunDeps, startedAt: number): Promise<RunOutcome | undefined> {
  const { store, scope } = deps;
  const identity = runIdentity(scope, options.command);
  let open = await store.runs.open(scope, identity);
  // A dry run changes nothing, a run's lease included.
  const claim = async (run: RunRecord) => (options.dryRun ? undefined : RunLease.claim(store, run, deps.lease, deps.now));
  let lease = open && (await claim(open));
  /** The run being worked on, once one is (continued or created). */
  let active: RunRecord | undefined;
  try {
    const { value: prepared, source } = await prepare(options, deps, (open && planOf(open))?.limits ?? deps.limits);
    // What preparation found is said before the plan (and any question about money).
    await deps.onPrepared?.(prepared);
    if (!open) {
      open = await legacyRunOf(store.runs, scope, {
        sourcePath: options.command.sourcePath,
        product: options.product,
        countryMode: options.prepare.anyRegion ? "auto" : options.country,
        settings: prepared.settings,
      });
      lease = open && (await claim(open));
      if (open && !options.dryRun) await store.runs.update(open.id, { identity });
    }
    if (open && !planless(open)) {
      active = options.dryRun ? undefined : open;
      const continued = await continueRun(open, prepared, options, deps, startedAt);
      if (continued === "dry run") return undefined;
      if (continued) {
        // The same numbers, perhaps from a file touched since: the run now stands for the file as read.
        await store.runs.update(open.id, { source });
        return { ...continued, prepared, lease: lease! };
      }
      await lease?.release();
      lease = undefined;
      active = undefined;
      open = undefined;
    }
    if (!options.dryRun) {
      // The run is this process's before anything is planned: another process running the same command
      // now waits for it (RunBusyError) without having shown a plan it never makes.
      if (open) await store.runs.update(open.id, { source, prepared: prepared.summary });
      else ({ run: open, lease } = await createRun(options, deps, identity, { ...prepared, source }));
      active = open;
    }
    return await planAndClaim(options, deps, startedAt, prepared, active, lease);
  } catch (error) {
    // A failed task has no result, ever: its run can never write its output, so it ends here and the next run checks the list again.
    if (active && error instanceof TaskFailedError) {
      await store.runs.update(active.id, { state: "failed", finishedAt: new Date(deps.now()).toISOString(), note: error.message });
    } else if (active && planless((await store.runs.get(active.id)) ?? active)) {
      // Stopped before it claimed anything (the plan refused, a question answered no, Ctrl-C): no trace of it stays.
      await store.runs.discard(active.id);
    } else if (active && endsUnpaidRun(error) && !(await store.tasks.ofRun(active.id)).some((task) => task.taskId)) {
      // Refused before any task existed (the key, the balance): nothing to carry on, and the next run plans afresh.
      await store.runs.update(active.id, {
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
 * Plans the run, asks for the money, and claims what it uploads (see claimParts); planned
 * again whenever another run claimed numbers of the product meanwhile. Numbers too few for
 * a task while others of the list are in flight wait: with --wait, for those tasks, and then
 * the run plans again with their results in (which can fill the task). Undefined for a dry run.
 */
async function planAndClaim(
  options: SubmitRequest,
  deps: SubmitRunDeps,
  startedAt: number,
  prepared: PrepareResult,
  run: RunRecord | undefined,
  lease: RunLease | undefined,
): Promise<RunOutcome | undefined> {
  let confirmedMicros = 0;
  let laterMicros: number | undefined;
  for (;;) {
    const planned = await planNew(options, deps, startedAt, prepared);
    const { plan } = planned;
    if (run && options.wait && plan.waitingForInFlight) {
      deps.onEvent({ type: "waiting for in flight", plan });
      await takeInFlight(planned, options, deps, startedAt);
      continue;
    }
    deps.onEvent({ type: "plan", plan, continued: false });
    laterMicros ??= (await deps.laterMicros?.()) ?? 0;
    checkPlan(plan, options, laterMicros);
    if (!run || !lease) return undefined;
    if (plan.reservationMicros > confirmedMicros) {
      await checkFunds(plan.reservationMicros, deps, paddingMicros(plan), laterMicros);
      confirmedMicros = plan.reservationMicros;
    }
    const rows = await claimParts(deps.store, run, planned, options, deps.now);
    if (!rows) {
      deps.onEvent({ type: "claimed meanwhile" });
      continue;
    }
    const claimed = { ...run, plan };
    const results = await scheduleRunParts(claimed, planned, rows, new Map(), options, deps);
    return { run: claimed, plan, results, ...(await takeInFlight(planned, options, deps, startedAt)), prepared, lease };
  }
}

/** A plan made now: the ledger's answers as they stand, the claims of live runs counted in flight. */
async function planNew(options: SubmitRequest, deps: SubmitRunDeps, startedAt: number, prepared: PrepareResult): Promise<PlannedRun> {
  const { store, scope } = deps;
  const input: PlanInput = {
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
              asOfTaskRef: await store.tasks.maxRef(),
              ...(options.countUnanswered ? { inFlight: "now" as const } : {}),
              pad: options.pad,
              retryNoResult: options.retryNoResult,
            },
            liveClaims: await liveClaimants(store, scope, deps.now()),
          },
        }
      : {}),
  };
  return withLongerMaxAge(await planRun(input), input, deps.now());
}

/** A run created and held, whose plan is not made yet: its process stopped before it claimed anything. It is planned afresh. */
function planless(run: RunRecord): boolean {
  return run.plan === undefined && run.kind !== "legacy";
}

/**
 * Prepares the list: whole, or one list per country under --country auto (countries
 * too small for a task left out), with the source file's fingerprint taken around it,
 * so the run records exactly which file it read.
 */
async function prepare(
  options: SubmitRequest,
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
 * Carries on an unfinished run with its journalled plan: the list must still keep the
 * same numbers and split into the same parts, or the run is abandoned (its tasks' results
 * still reach the ledger as they finish) and undefined is returned for a new run.
 */
async function continueRun(
  run: RunRecord,
  prepared: PrepareResult,
  options: SubmitRequest,
  deps: SubmitRunDeps,
  startedAt: number,
): Promise<Omit<RunOutcome, "prepared" | "lease"> | "dry run" | undefined> {
  const { store } = deps;
  const tasks = await store.tasks.ofRun(run.id);
  const journalled = planOf(run) ?? legacyPlan(tasks, deps.priceMicros, run.country === "auto");
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
      await store.runs.update(run.id, { state: "abandoned", finishedAt: new Date(deps.now()).toISOString(), note: reason });
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
  await checkFunds(unknown.reduce((sum, row) => sum + (row.count ?? 0), 0) * journalled.priceMicros, deps);
  const results = await scheduleRunParts(run, again, rows, known, options, deps);
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

/** Records the new run (open, leased to this process, its plan to come); another process that opened the same command's run first wins. */
async function createRun(
  options: SubmitRequest,
  deps: SubmitRunDeps,
  identity: string,
  prepared: PrepareResult & { source: RunSource },
): Promise<{ run: RunRecord; lease: RunLease }> {
  const { store, scope } = deps;
  const startedAt = new Date(deps.now()).toISOString();
  const run = await store.runs.create(
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
      ...hostAndUser(),
    },
    deps.lease,
  );
  if (run === "exists") {
    // Another process opened this command's run a moment ago, and holds it.
    const other = await store.runs.open(scope, identity);
    throw new RunBusyError(other?.id ?? "?", other?.lease ?? deps.lease);
  }
  return { run, lease: RunLease.created(store, run.id, deps.lease, deps.now) };
}

/**
 * With --wait, the tasks in flight whose results the run takes are followed to their end
 * (after its own, which were submitted later) and their results made sure of in the
 * ledger; then they are reused like any ledger result. Without, they are only named.
 */
async function takeInFlight(
  planned: PlannedRun,
  options: SubmitRequest,
  deps: SubmitRunDeps,
  startedAt: number,
): Promise<Pick<RunOutcome, "reused" | "reusedTasks" | "inFlight" | "waiting">> {
  const inFlight = planned.plan.inFlight?.tasks ?? [];
  const taken = { reused: planned.reused, reusedTasks: planned.reusedTasks, inFlight, waiting: planned.waiting };
  if (!options.wait || inFlight.length === 0) return taken;
  const left = options.timeoutMs === undefined ? undefined : Math.max(0, startedAt + options.timeoutMs - deps.now());
  const followed = await followInFlight({ ...deps, client: await deps.client(), product: options.product }, inFlight, {
    pollIntervalMs: options.pollIntervalMs,
    ...(left === undefined ? {} : { timeoutMs: left }),
    ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
    resumeCommand: options.resumeCommand,
    waitResumes: false,
  });
  return { ...taken, inFlight: followed.tasks, reusedTasks: new Map([...planned.reusedTasks, ...followed.checkedAt]) };
}

/**
 * Ends a run: its output is written (or, without one, its tasks are submitted or finished as
 * asked). What `ledger forget` remembered for it (and for no other open run) goes.
 */
export async function finishRun(
  store: Store,
  outcome: Pick<RunOutcome, "run" | "lease">,
  now: () => number,
  output?: unknown,
): Promise<void> {
  await store.runs.update(outcome.run.id, { state: "finished", finishedAt: new Date(now()).toISOString(), ...(output ? { output } : {}) });
  await outcome.lease.release();
  await store.ledger.dropSpentErasures();
}

/** Ends a run that cannot finish (its output could not be written), with the reason: the next run of the command starts afresh. */
export async function failRun(store: Store, outcome: Pick<RunOutcome, "run" | "lease">, now: () => number, error: unknown): Promise<void> {
  const reason = error instanceof Error ? error.message : String(error);
  await store.runs.update(outcome.run.id, { state: "failed", finishedAt: new Date(now()).toISOString(), note: reason });
  await outcome.lease.release();
  await store.ledger.dropSpentErasures();
}

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

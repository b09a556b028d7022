import { stat } from "node:fs/promises";
import type { ResultSource } from "../results/read-results.js";
import type { RunRecord, Scope, Store } from "../store/store.js";
import { joinTaskResults, type JoinDeps, type JoinOutcome, type JoinTarget } from "../tasks/join.js";
import { withTempDir } from "../temp-dir.js";
import type { RunPlan } from "./plan.js";
import { rebuildRun } from "./rebuild.js";
import { reusedSources } from "./reused-results.js";

/** A join's tasks completed to whole runs: the ids given, the run's other tasks, and its results from the ledger. */
export interface RunResults {
  /** Every task id to join, the given ones first. */
  ids: string[];
  /** The tasks added because they are parts of the same run as a given one. */
  added: string[];
  /** The results the runs took from the ledger (their reused numbers). */
  reused: ResultSource[];
  /** Runs that reused numbers which could not be found again: their list is gone, or changed since. */
  unfound: Array<{ run: RunRecord; reused: number }>;
  /** When each task's result was checked, as the store knows it. */
  checkedAt: Map<string, string>;
}

/**
 * A run's output is all of its parts and the ledger results it reused: a join given one
 * task of a split run (or of a run that reused results) joins the whole run, so no row
 * that was checked and paid for is written as `no_result`, and a report describes the
 * whole run. The reused numbers are found by planning the run again from its list
 * (`sourceOf` the run: the join's source, or the list the run recorded) with its
 * journalled rule (see rebuildRun).
 */
export async function runResults(
  deps: { store: Store; scope: Scope; dir: string; signal?: AbortSignal },
  ids: readonly string[],
  sourceOf: (run: RunRecord) => Promise<string | undefined>,
): Promise<RunResults> {
  const { store, scope } = deps;
  const runs = new Map<string, RunRecord>();
  const checkedAt = new Map<string, string>();
  for (const id of ids) {
    const task = await store.tasks.byId(scope, id);
    if (task?.checkedAt) checkedAt.set(id, task.checkedAt);
    if (task?.runId === undefined || runs.has(task.runId)) continue;
    const run = await store.runs.get(task.runId);
    if (run) runs.set(run.id, run);
  }
  const all = [...ids];
  const reused: ResultSource[] = [];
  const unfound: RunResults["unfound"] = [];
  for (const run of runs.values()) {
    for (const task of await store.tasks.ofRun(run.id)) {
      if (task.taskId === undefined || all.includes(task.taskId)) continue;
      all.push(task.taskId);
      if (task.checkedAt) checkedAt.set(task.taskId, task.checkedAt);
    }
    const numbers = (run.plan as RunPlan | undefined)?.reused ?? 0;
    if (numbers === 0) continue;
    const source = await sourceOf(run);
    const rebuilt = source === undefined ? undefined : await rebuildRun(run, source, deps);
    if (rebuilt?.unchanged) reused.push(...reusedSources(store, rebuilt.planned.reused, rebuilt.planned.reusedTasks));
    else unfound.push({ run, reused: numbers });
  }
  return { ids: all, added: all.slice(ids.length), reused, unfound, checkedAt };
}

/** The list a run was submitted from, when it is still a file there (a list may be moved or deleted since; stdin has none). */
export async function recordedList(run: RunRecord): Promise<string | undefined> {
  const { path } = run.source;
  if (path === undefined) return undefined;
  const isFile = await stat(path).then(
    (stats) => stats.isFile(),
    () => false,
  );
  return isFile ? path : undefined;
}

export interface JoinRunsDeps extends JoinDeps {
  store: Store;
  scope: Scope;
  now: () => number;
  /** Tasks were added to the ones given because they are parts of the same run. */
  onWholeRun?: (added: readonly string[]) => void;
}

/**
 * Writes the source rows with the results of whole runs beside them: a run's own output
 * (`deps.staged`) has its whole run staged already; tasks given by id are completed to
 * their whole runs (see runResults). A result the store has no check date for is dated now.
 */
export async function joinWholeRuns(
  deps: JoinRunsDeps,
  ids: readonly string[],
  target: Omit<JoinTarget, "checkedAt" | "reused" | "product" | "settings">,
): Promise<JoinOutcome> {
  const now = new Date(deps.now()).toISOString();
  const { staged } = deps;
  if (staged) {
    return joinTaskResults(deps, ids, {
      ...target,
      checkedAt: (task) => staged.checkedAt(task),
      product: staged.product,
      settings: staged.settings,
    });
  }
  return withTempDir(async (dir) => {
    const run = await runResults({ ...deps, dir }, ids, () => Promise.resolve(target.sourcePath));
    if (run.added.length > 0) deps.onWholeRun?.(run.added);
    return joinTaskResults(deps, run.ids, {
      ...target,
      checkedAt: (task) => run.checkedAt.get(task.id) ?? now,
      ...(run.reused.length > 0 ? { reused: run.reused } : {}),
    });
  });
}

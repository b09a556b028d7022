import { stat } from "node:fs/promises";
import { planOf } from "../run/run-record.js";
import type { ResultSource } from "../results/read-results.js";
import type { RunRecord, Scope, Store } from "../store/store.js";
import type { UnsentNumbers } from "../tasks/download.js";
import { rebuildRun } from "../run/rebuild.js";
import { reusedSources } from "../run/reused-results.js";

/** Tasks were added to the ones given (to a join or a report) because they are parts of the same run. */
export interface WholeRunEvent {
  type: "whole-run";
  given: readonly string[];
  added: readonly string[];
}

/** A join's tasks completed to whole runs: the ids given, the run's other tasks, and its results from the ledger. */
export interface RunResults {
  /** Every task id to join, the given ones first. */
  ids: string[];
  /** The tasks added because they are parts of the same run as a given one. */
  added: string[];
  /** The results the runs took from the ledger (their reused numbers). */
  reused: ResultSource[];
  /** Each run's numbers that none of its tasks was given (found again where its list is unchanged). */
  unsent: UnsentNumbers[];
  /** Runs that reused numbers which could not be found again: their list is gone, or changed since. */
  unfound: Array<{ run: RunRecord; reused: number }>;
  /** When each task's result was checked, as the store knows it. */
  checkedAt: Map<string, string>;
}

/**
 * A run's output is all of its parts and the ledger results it reused: a join given one
 * task of a split run (or of a run that reused results) joins the whole run, so no row
 * that was checked and paid for is written as `no_result` (nor a number the run left
 * waiting, nor one it reused, as checked now), and a report describes the whole run. The
 * reused and waiting numbers are found by planning the run again from its list (`sourceOf`
 * the run: the join's source, or the list the run recorded) with its journalled rule (see
 * rebuildRun).
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
  const unsent: UnsentNumbers[] = [];
  const unfound: RunResults["unfound"] = [];
  for (const run of runs.values()) {
    for (const task of await store.tasks.ofRun(run.id)) {
      if (task.taskId === undefined || all.includes(task.taskId)) continue;
      all.push(task.taskId);
      if (task.checkedAt) checkedAt.set(task.taskId, task.checkedAt);
    }
    const plan = planOf(run);
    const numbers = plan?.reused ?? 0;
    if (numbers === 0 && !plan?.waiting) continue;
    const source = await sourceOf(run);
    const rebuilt = source === undefined ? undefined : await rebuildRun(run, source, deps);
    if (rebuilt?.unchanged) {
      reused.push(...reusedSources(store, rebuilt.planned.reused, rebuilt.planned.reusedTasks));
      unsent.push({ reused: rebuilt.planned.reused, waiting: rebuilt.planned.waiting });
    } else if (numbers > 0) unfound.push({ run, reused: numbers });
  }
  return { ids: all, added: all.slice(ids.length), reused, unsent, unfound, checkedAt };
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

import { addSummaries, type PrepareSummary } from "../prepare/summary.js";
import { planOf } from "../run/run-record.js";
import { runSummary, type TaskOrigin } from "../tasks/origins.js";
import type { RunPlan } from "../run/plan.js";
import type { RunRecord } from "../store/store.js";

/** What the store knows of how the tasks' lists were prepared, planned and uploaded. */
export interface RunFacts {
  /** The preparation summaries of the lists the tasks came from, added up; a split list's parts share one, counted once. */
  preparation?: PrepareSummary;
  /** Numbers uploaded in the recorded parts: what the estimate before submitting was made on. */
  uploaded: number;
  /** Tasks the store knows (submitted from this machine, or a store it shares). */
  known: number;
  /** The lists the tasks were submitted from, as absolute paths (stdin has none). */
  sources: string[];
  /** What each run decided before its first upload (runs of 0.1 planned nothing), each run once. */
  plans: RunPlan[];
}

/**
 * What the store knows of the tasks' runs, for a report; `runs` adds runs the tasks do
 * not lead to (a run whose every number came from the ledger has no task).
 */
export function runFacts(origins: ReadonlyMap<string, TaskOrigin>, runs: readonly RunRecord[] = []): RunFacts {
  const byId = new Map<string, RunRecord>();
  let uploaded = 0;
  for (const { task, run } of origins.values()) {
    uploaded += task.count ?? 0;
    if (run) byId.set(run.id, run);
  }
  for (const run of runs) byId.set(run.id, run);
  const all = [...byId.values()];
  const summaries = all.map(runSummary).filter((summary) => summary !== undefined);
  const sources = all.map((run) => run.source.path).filter((path) => path !== undefined);
  return {
    ...(summaries.length > 0 ? { preparation: addSummaries(summaries) } : {}),
    uploaded,
    known: origins.size,
    sources: [...new Set(sources)],
    plans: all.map((run) => planOf(run)).filter((plan) => plan !== undefined),
  };
}

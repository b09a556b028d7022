import { addSummaries, type PrepareSummary } from "../prepare/summary.js";
import { runSummaries, type TaskOrigin } from "../run/origins.js";

/** What the store knows of how the tasks' lists were prepared and uploaded. */
export interface RunFacts {
  /** The preparation summaries of the lists the tasks came from, added up; a split list's parts share one, counted once. */
  preparation?: PrepareSummary;
  /** Numbers uploaded in the recorded parts: what the estimate before submitting was made on. */
  uploaded: number;
  /** Tasks the store knows (submitted from this machine, or a store it shares). */
  known: number;
  /** The lists the tasks were submitted from, as absolute paths (stdin has none). */
  sources: string[];
}

/** What the store knows of the tasks' runs, for a report. */
export function runFacts(origins: ReadonlyMap<string, TaskOrigin>): RunFacts {
  const summaries = runSummaries(origins.values());
  const sources = new Set<string>();
  let uploaded = 0;
  for (const { task, run } of origins.values()) {
    uploaded += task.count ?? 0;
    if (run?.source.path !== undefined) sources.add(run.source.path);
  }
  return {
    ...(summaries.length > 0 ? { preparation: addSummaries(summaries) } : {}),
    uploaded,
    known: origins.size,
    sources: [...sources],
  };
}

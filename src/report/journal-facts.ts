import type { Journal } from "../journal/journal.js";
import { addSummaries, type PrepareSummary } from "../prepare/summary.js";

/** What the journal knows of how the tasks' lists were prepared and uploaded. */
export interface JournalFacts {
  /** The preparation summaries of the lists the tasks came from, added up; a split list's parts share one, counted once. */
  preparation?: PrepareSummary;
  /** Numbers uploaded in the journalled parts: what the estimate before submitting was made on. */
  uploaded: number;
  /** Tasks the journal knows (submitted from this machine). */
  known: number;
  /** The lists the tasks were submitted from, as absolute paths (stdin has none). */
  sources: string[];
}

/** Reads the journal once for the submits of `taskIds`. */
export async function journalFacts(journal: Pick<Journal, "records">, taskIds: readonly string[]): Promise<JournalFacts> {
  const wanted = new Set(taskIds);
  const records = (await journal.records()).filter((record) => record.taskId !== undefined && wanted.has(record.taskId));
  // A task id journalled twice (a replayed submit) is one task: its latest record stands.
  const byTask = new Map(records.map((record) => [record.taskId, record.submit]));
  const summaries = new Map<string, PrepareSummary>();
  const sources = new Set<string>();
  let uploaded = 0;
  for (const submit of byTask.values()) {
    uploaded += submit.chunk.count;
    if (submit.source.path !== undefined) sources.add(submit.source.path);
    if (submit.prepared) summaries.set(JSON.stringify(submit.prepared), submit.prepared);
  }
  return {
    ...(summaries.size > 0 ? { preparation: addSummaries([...summaries.values()]) } : {}),
    uploaded,
    known: byTask.size,
    sources: [...sources],
  };
}

import type { ReadResults } from "../report/write-report.js";
import type { Scope, Store } from "../store/store.js";
import { downloadResults, type DownloadDeps } from "../tasks/download.js";
import { withTempDir } from "../temp-dir.js";
import { recordedList, runResults, type WholeRunEvent } from "./whole-runs.js";

export interface ReportResultsDeps extends DownloadDeps {
  store: Store;
  scope: Scope;
  onEvent?: (event: WholeRunEvent) => void;
}

/** The results a report describes, read only to count them, and the lists of runs whose reused rows could not be read again. */
export interface ReportResults {
  read: ReadResults;
  unreadLists: string[];
}

/**
 * Reads the tasks' results only to count them (nothing is written) for a report:
 * `bulkcheck report`, and --report without -o (or with --join, whose rows are not counted
 * by result column). A run's own report reads its staged results (`deps.staged`); tasks
 * given by id are completed to their whole runs, the results the runs took from the
 * ledger included (see runResults), so the report describes what the runs' output holds.
 */
export async function reportResults(taskIds: readonly string[], deps: ReportResultsDeps): Promise<ReportResults> {
  const read = async (ids: readonly string[], more: Pick<DownloadDeps, "staged" | "reused">): Promise<ReadResults> => {
    const outcome = await downloadResults({ ...deps, ...more }, ids, { force: false, format: "csv", colour: false });
    return { summary: outcome.summary, tasks: outcome.tasks };
  };
  if (deps.staged) return { read: await read(taskIds, { staged: deps.staged }), unreadLists: [] };
  return withTempDir(async (dir) => {
    const whole = await runResults({ ...deps, dir }, taskIds, recordedList);
    if (whole.added.length > 0) deps.onEvent?.({ type: "whole-run", given: taskIds, added: whole.added });
    return {
      read: await read(whole.ids, whole.reused.length > 0 ? { reused: whole.reused } : {}),
      unreadLists: whole.unfound.map(({ run }) => run.source.path ?? "standard input"),
    };
  });
}

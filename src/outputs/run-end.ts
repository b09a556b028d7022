import type { ChangesSummary } from "../ledger/changes.js";
import { planOf } from "../run/run-record.js";
import type { RunOutcome } from "../run/submit-request.js";
import { failRun, finishRun } from "../run/submit-run.js";
import { writeJoinedOutput } from "./join.js";
import {
  writeMergedOutput,
  writeReportOutput,
  type MergedOutput,
  type OutputDeps,
  type OutputEvent,
  type OutputOfRun,
} from "./output-files.js";
import { wantsChanges, type OutputsRequest } from "./outputs-request.js";
import type { RunOutputs } from "./run-outputs.js";

/*
 * The end of a run, below the terminal: once submitRun has uploaded its parts (and, with
 * --wait, followed its tasks to their end), its results are read, the changes since each
 * number's previous check worked out, the outputs written (merged or joined, the report), and
 * the run finished, or failed when its output cannot be written; then its staging is removed
 * and old results pruned. What happens is told as events, which the command words.
 */

/** What the end of a run tells, beside what writing its outputs tells (OutputEvent). */
export type RunEndEvent =
  /** Numbers that need a result were too few for a task (and --pad never): they wait for a later run. */
  | { type: "waiting"; numbers: number }
  /** Without --wait: the tasks to follow (none when every number was served by the ledger), and whether numbers wait. */
  | { type: "not waited"; followed: readonly string[]; waiting: boolean }
  /** The changes since each number's previous check (written to --changes when asked). */
  | { type: "changes"; summary: ChangesSummary }
  /** With --wait and nothing to write: the tasks have finished. */
  | { type: "done"; taskIds: readonly string[] };

export interface RunEndDeps extends Omit<OutputDeps, "onEvent"> {
  /** The run's results on their way (staged as its tasks finished). */
  outputs: RunOutputs;
  /** How a table written to stdout is drawn. */
  table: MergedOutput["table"];
  /** The command's rules of what it may write (-o, --report, the list read), checked again just before writing. */
  checkDestinations: (outputs: Readonly<Record<string, string | undefined>>, reading: readonly string[]) => Promise<void>;
  onEvent: (event: RunEndEvent | OutputEvent) => void;
}

/**
 * Ends a run whose parts are uploaded: writes what `request` asks (see writeRunOutputs), then
 * finishes the run with `output` (what its record keeps of where the output went), removes its
 * staging and prunes results past `request.retentionSeconds`. An output that cannot be written
 * fails the run when its results are in the ledger (the next run of the command writes them
 * without paying again); without the ledger the run stays open, to be carried on.
 */
export async function endRun(outcome: RunOutcome, request: OutputsRequest, output: unknown, deps: RunEndDeps): Promise<void> {
  try {
    await writeRunOutputs(outcome, request, deps);
  } catch (error) {
    if (request.ledger && request.wait) await failRun(deps.store, outcome, deps.now, error);
    throw error;
  }
  await finishRun(deps.store, outcome, deps.now, output);
  await deps.outputs.finish(request.retentionSeconds);
}

/** Without --wait, what to follow; with it, the run's results read, their changes, and the outputs the request asks for. */
async function writeRunOutputs(outcome: RunOutcome, request: OutputsRequest, deps: RunEndDeps): Promise<void> {
  const ids = outcome.results.map((result) => result.task.id);
  if (outcome.plan.waiting) deps.onEvent({ type: "waiting", numbers: outcome.plan.waiting });
  if (!request.wait) {
    const inFlight = outcome.inFlight.flatMap((task) => (task.taskId === undefined ? [] : [task.taskId]));
    deps.onEvent({ type: "not waited", followed: [...ids, ...inFlight], waiting: Boolean(outcome.plan.waiting) });
    return;
  }
  const staged = await deps.outputs.results(outcome);
  let changes: ChangesSummary | undefined;
  if (wantsChanges(request)) {
    changes = await deps.outputs.changes(outcome, request.changes);
    deps.onEvent({ type: "changes", summary: changes });
  }
  await writeOutputs(ids, request, { staged, changes, record: outcome.run }, deps);
}

/**
 * The request's -o (merged, or joined to its list) and --report of finished tasks (submit's
 * and retry-failed's); a run's own output reads the results it fetched already, and its
 * report describes it.
 */
export async function writeOutputs(
  ids: readonly string[],
  request: Pick<OutputsRequest, "output" | "report" | "force">,
  run: OutputOfRun,
  deps: Omit<RunEndDeps, "outputs">,
): Promise<void> {
  const { report, output, force } = request;
  if (output === undefined) {
    if (report !== undefined) await writeReportOutput(ids, report, force, run, deps);
    else deps.onEvent({ type: "done", taskIds: ids });
  } else if (output.join) {
    const { sourcePath, safeCsv } = output.join;
    await deps.checkDestinations({ "-o": output.path }, [sourcePath]);
    await writeJoinedOutput({ taskIds: ids, sourcePath, output: output.path, force, format: output.format, safeCsv }, run, deps);
    // The join does not count rows by result column: the report reads the results once more.
    if (report !== undefined) await writeReportOutput(ids, report, force, run, deps);
  } else {
    await deps.checkDestinations({ "-o": output.path, "--report": report }, []);
    await writeMergedOutput(ids, { path: output.path, format: output.format, force, report, table: deps.table }, run, deps);
  }
}

/** The numbers of a run's list left waiting for a later run, as its record's plan says (0 for none, or no run). */
export function waitingOf(run: OutputOfRun["record"]): number {
  return (run && planOf(run))?.waiting ?? 0;
}

import { stateDir } from "../../../config/paths.js";
import { anythingChanged, type ChangesSummary } from "../../../ledger/changes.js";
import { RunOutputs } from "../../../outputs/run-outputs.js";
import type { RunOutcome } from "../../../run/submit-request.js";
import type { ServiceType } from "../../../spec/products.js";
import type { RunRecord } from "../../../store/store.js";
import type { UploadResult } from "../../../tasks/submit.js";
import { count } from "../../../format-count.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { fetchesResults, type OutputsRequest } from "../../../outputs/outputs-request.js";
import { endRun, waitingOf, type RunEndEvent } from "../../../outputs/run-end.js";
import { tasksGoOn } from "./after-upload.js";
import { runWritingDeps } from "./output-view.js";
import { isStdout } from "./destination.js";
import { brokeOff, notPublished, resultRecording } from "./download-deps.js";

/** How the terminal shows a run's changes: the summary line even under --quiet, and exit 11 when anything changed. */
export interface ChangesView {
  /** --changes-summary. */
  summary: boolean;
  /** --exit-on-change. */
  exitOnChange: boolean;
}

/**
 * A run's outputs as the request asks for them (see RunOutputs for what happens to the
 * results, outputs/run-end.ts for the end of the run), told on the terminal: whether results
 * are fetched as tasks finish, then the run ended once every task has.
 */
export async function runOutputsView(ctx: Context, request: OutputsRequest, product: ServiceType, view: ChangesView) {
  const output = new RunOutputs({
    store: await ctx.store(),
    scope: await ctx.scope(),
    client: () => ctx.client(),
    product,
    ledger: request.ledger,
    stateDir: stateDir(ctx.env),
    now: ctx.now,
    sleep: ctx.sleep,
    signal: ctx.signal,
    recording: resultRecording(ctx, await ctx.storeLocation()),
    onEvent: (event) => {
      if (event.type === "restart") ctx.printer.note(brokeOff(event.error));
      else if (event.type === "not-published") ctx.printer.note(notPublished(event.taskId, event.delayMs));
      else if (event.type === "collected") {
        ctx.printer.note(`Kept in the ledger the results of ${count(event.tasks)} task(s) of abandoned runs that finished since.`);
      } else {
        ctx.printer.warn(
          `the results of abandoned runs could not be collected this time (${event.error.message}); the next run tries again.`,
        );
      }
    },
  });

  /** How the terminal tells the end of the run: numbers left waiting, what to follow without --wait, the changes. */
  const drawRunEvent = (event: Exclude<RunEndEvent, { type: "done" }>) => {
    if (event.type === "waiting") {
      ctx.printer.note(
        `${count(event.numbers)} numbers that need a result wait for a later run (fewer than a task's minimum, and --pad never).`,
      );
    } else if (event.type === "not waited") {
      const { followed } = event;
      ctx.printer.note(
        followed.length > 0
          ? `Next: bulkcheck wait ${followed.join(" ")}   then: bulkcheck download ${followed.join(" ")} -o results.csv`
          : event.waiting
            ? "No task was needed for the other numbers: each was checked within --max-age. Write their results with --wait -o FILE."
            : "Every number was checked within --max-age, so no task was needed. Write the results with --wait -o FILE.",
      );
    } else {
      // The changes go to whoever reads the command's outcome when it ends (--on-done, --notify) too.
      ctx.outcome.changes = event.summary;
      if (request.changes !== undefined || view.summary)
        ctx.printer.note(describeChanges(event.summary, request.changes?.path), view.summary);
      if (view.exitOnChange && anythingChanged(event.summary)) ctx.outcome.changed = true;
    }
  };

  return {
    /** The run's results on their way (a chain reads each product's when its tasks have finished). */
    outputs: output,
    /** How the end of the run is told (a chain's end tells its changes through its first product's view). */
    drawRunEvent,
    /** With --wait, results are fetched as tasks finish: for the output, or for the ledger alone. */
    fetchesResults: fetchesResults(request),
    stage: (result: UploadResult, run: RunRecord) =>
      output.stage(result, run).catch((error: unknown) => {
        throw tasksGoOn(error);
      }),
    /**
     * Ends the run (outputs/run-end.ts): writes what the flags ask for once its tasks are submitted
     * (and, with --wait, finished), finishes it with where its output went (`runs show`), cleans up.
     */
    async end(outcome: RunOutcome): Promise<void> {
      const context = { runId: outcome.run.id, waiting: waitingOf(outcome.run) };
      const deps = { ...(await runWritingDeps(ctx, request, context, drawRunEvent)), outputs: output };
      await endRun(outcome, request, outputRecord(ctx, request), deps).catch((error: unknown) => {
        throw tasksGoOn(error);
      });
    },
  };
}

/** What a run's record keeps of where its outputs went (`runs show`). */
export function outputRecord(ctx: Context, request: OutputsRequest) {
  const { output: written, changes, report } = request;
  return {
    ...(written === undefined ? {} : { path: isStdout(written.path) ? "-" : absolutePath(ctx, written.path) }),
    ...(written?.join ? { join: true } : {}),
    ...(changes === undefined ? {} : { changes: isStdout(changes.path) ? "-" : absolutePath(ctx, changes.path) }),
    ...(report === undefined ? {} : { report: isStdout(report) ? "-" : absolutePath(ctx, report) }),
  };
}

/** The summary line of the changes: results that changed, then the list's numbers that appeared and left. */
function describeChanges(summary: ChangesSummary, path: string | undefined): string {
  const where = path === undefined || isStdout(path) ? "" : ` (written to ${path})`;
  const { list } = summary;
  const listText = list
    ? `; in the list, ${count(list.appeared)} appeared and ${count(list.left)} left since run ${list.since.run}`
    : "; the list was not compared (no earlier run of this command kept the same numbers or checked its whole list)";
  if (summary.compared === 0) return `Changes: none of these numbers had a previous result in the ledger${listText}${where}.`;
  const columns = summary.columns.map((column) => `${column.column} ${count(column.numbers)}`).join(", ");
  return `Changes since the previous check: ${count(summary.numbers)} of ${count(summary.compared)} numbers checked before${columns ? ` (${columns})` : ""}${listText}${where}.`;
}

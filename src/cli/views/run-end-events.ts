import { anythingChanged, type ChangesSummary } from "../../ledger/changes.js";
import { isStdout, type OutputEvent } from "../../outputs/output-files.js";
import type { OutputsRequest } from "../../outputs/outputs-request.js";
import type { RunEndEvent } from "../../outputs/run-end.js";
import type { RunOutputsEvent } from "../../outputs/run-outputs.js";
import { count } from "../../format-count.js";
import type { Context } from "../context.js";
import { brokeOff, notPublished } from "./output-events.js";

/** How the terminal shows a run's changes: the summary line even under --quiet, and exit 11 when anything changed. */
export interface ChangesView {
  /** --changes-summary. */
  summary: boolean;
  /** --exit-on-change. */
  exitOnChange: boolean;
}

/** What the terminal tells of a run's results on their way (RunOutputs): a transfer restarted, a file not yet published, old runs collected. */
export function drawRunOutputsEvent(ctx: Context): (event: RunOutputsEvent) => void {
  return (event) => {
    if (event.type === "restart") ctx.printer.note(brokeOff(event.error));
    else if (event.type === "not-published") ctx.printer.note(notPublished(event.taskId, event.delayMs));
    else if (event.type === "collected") {
      ctx.printer.note(`Kept in the ledger the results of ${count(event.tasks)} task(s) of abandoned runs that finished since.`);
    } else {
      ctx.printer.warn(
        `the results of abandoned runs could not be collected this time (${event.error.message}); the next run tries again.`,
      );
    }
  };
}

/** How the events of a run's end other than "done" are told (see runEventDrawer). */
export type RunEventDrawer = (event: Exclude<RunEndEvent, { type: "done" }>) => void;

/** How the terminal tells the end of the run: numbers left waiting, what to follow without --wait, the changes. */
export function runEventDrawer(ctx: Context, request: Pick<OutputsRequest, "changes">, view: ChangesView): RunEventDrawer {
  return (event) => {
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
}

/** Every event of a run's end (outputs/run-end.ts) told: "done" here, the run's own with `drawRunEvent`, the outputs' with `drawOutput`. */
export function drawRunEnd(
  ctx: Context,
  drawOutput: (event: OutputEvent) => void,
  drawRunEvent: RunEventDrawer,
): (event: RunEndEvent | OutputEvent) => void {
  return (event) => {
    switch (event.type) {
      case "done":
        ctx.printer.note(
          event.taskIds.length > 0 ? `Done. Download with: bulkcheck download ${event.taskIds.join(" ")} -o results.csv` : "Done.",
        );
        return;
      case "waiting":
      case "not waited":
      case "changes":
        drawRunEvent(event);
        return;
      default:
        drawOutput(event);
    }
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

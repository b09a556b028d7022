import { stateDir } from "../../../config/paths.js";
import { anythingChanged, type ChangesSummary } from "../../../ledger/changes.js";
import { RunOutput } from "../../../run/run-output.js";
import type { RunOutcome } from "../../../run/submit-run.js";
import type { ServiceType } from "../../../spec/products.js";
import type { RunRecord } from "../../../store/store.js";
import type { UploadResult } from "../../../tasks/submit.js";
import { count } from "../../../format-count.js";
import type { Context } from "../../context.js";
import { dataOut } from "../../io.js";
import { absolutePath } from "../../paths.js";
import { tasksGoOn, writeOutput, type AfterUploadFlags } from "./after-upload.js";
import { isStdout } from "./destination.js";
import { brokeOff, notPublished, resultRecording } from "./download-deps.js";

export interface RunOutputFlags extends AfterUploadFlags {
  /** Whether this run keeps its results in the ledger (and reuses from it). */
  ledger: boolean;
  /** --changes FILE|-. */
  changes?: string;
  /** --changes-appeared-left: the changes file also has the numbers that appeared in the list or left it. */
  changesAppearedLeft?: boolean;
  /** --changes-summary: the changes' summary line even under --quiet. */
  changesSummary?: boolean;
  /** --exit-on-change: exit 11 when the run succeeds and something changed. */
  exitOnChange?: boolean;
  /** The profile's ledger-retention, in seconds: results older are pruned once the output is written. */
  retentionSeconds?: number | undefined;
  /** The list's absolute path (absent for stdin): the join's source. */
  sourcePath?: string | undefined;
  product: ServiceType;
}

/**
 * A run's output as its flags ask for it (see RunOutput for what happens to the results):
 * whether results are fetched as tasks finish, then -o (plain or --join), --changes and
 * --report written once every task has, and what the run's record keeps of them.
 */
export async function runOutput(ctx: Context, flags: RunOutputFlags) {
  const wantsResults = flags.output !== undefined || flags.report !== undefined || flags.changes !== undefined;
  const output = new RunOutput({
    store: await ctx.store(),
    scope: await ctx.scope(),
    client: () => ctx.client(),
    product: flags.product,
    ledger: flags.ledger,
    stateDir: stateDir(ctx.env),
    now: ctx.now,
    sleep: ctx.sleep,
    signal: ctx.signal,
    onRestart: (error) => ctx.printer.note(brokeOff(error)),
    onWait: (taskId, delayMs) => ctx.printer.note(notPublished(taskId, delayMs)),
    onCollected: (tasks) =>
      ctx.printer.note(`Kept in the ledger the results of ${count(tasks)} task(s) of abandoned runs that finished since.`),
    recording: resultRecording(ctx, await ctx.storeLocation()),
    onCollectFailed: (error) =>
      ctx.printer.warn(`the results of abandoned runs could not be collected this time (${error.message}); the next run tries again.`),
  });

  /**
   * The changes since the previous check, when anything wants them: --changes, the report, the summary line, the
   * change exit status, or whoever reads the command's outcome when it ends (--on-done, --notify).
   */
  const writeChanges = async (outcome: RunOutcome): Promise<ChangesSummary | undefined> => {
    const wanted =
      flags.changes !== undefined || flags.report !== undefined || flags.changesSummary || flags.exitOnChange || ctx.outcome.awaited;
    if (!flags.ledger || !wanted) return undefined;
    const summary = await output.changes(
      outcome,
      flags.changes === undefined
        ? undefined
        : {
            format: flags.changes.toLowerCase().endsWith(".xlsx") ? "xlsx" : "csv",
            destination: isStdout(flags.changes)
              ? { stream: dataOut(ctx.io) }
              : { path: absolutePath(ctx, flags.changes), force: Boolean(flags.force) },
            listRows: Boolean(flags.changesAppearedLeft),
          },
    );
    ctx.outcome.changes = summary;
    if (flags.changes !== undefined || flags.changesSummary)
      ctx.printer.note(describeChanges(summary, flags.changes), flags.changesSummary);
    if (flags.exitOnChange && anythingChanged(summary)) ctx.outcome.changed = true;
    return summary;
  };

  return {
    /** With --wait, results are fetched as tasks finish: for the output, or for the ledger alone. */
    fetchesResults: Boolean(flags.wait) && (flags.ledger || wantsResults),
    stage: (result: UploadResult, run: RunRecord) =>
      output.stage(result, run).catch((error: unknown) => {
        throw tasksGoOn(error);
      }),
    /** Writes what the flags ask for once the run's tasks are submitted (and, with --wait, finished). */
    async write(outcome: RunOutcome): Promise<void> {
      const ids = outcome.results.map((result) => result.task.id);
      if (outcome.plan.waiting) {
        ctx.printer.note(
          `${count(outcome.plan.waiting)} numbers that need a result wait for a later run (fewer than a task's minimum, and --pad never).`,
        );
      }
      if (!flags.wait) {
        const followed = [...ids, ...outcome.inFlight.map((task) => task.taskId)];
        ctx.printer.note(
          followed.length > 0
            ? `Next: bulkcheck wait ${followed.join(" ")}   then: bulkcheck download ${followed.join(" ")} -o results.csv`
            : "Every number was checked within --max-age, so no task was needed. Write the results with --wait -o FILE.",
        );
        return;
      }
      const staged = await output.results(outcome);
      const changes = await writeChanges(outcome).catch((error: unknown) => {
        throw tasksGoOn(error);
      });
      await writeOutput(ctx, ids, flags, { sourcePath: flags.sourcePath, staged, changes, record: outcome.run });
    },
    /** What the run's record keeps of its output (`runs show`). */
    describe() {
      return {
        ...(flags.output === undefined ? {} : { path: isStdout(flags.output) ? "-" : absolutePath(ctx, flags.output) }),
        ...(flags.join ? { join: true } : {}),
        ...(flags.changes === undefined ? {} : { changes: isStdout(flags.changes) ? "-" : absolutePath(ctx, flags.changes) }),
        ...(flags.report === undefined ? {} : { report: isStdout(flags.report) ? "-" : absolutePath(ctx, flags.report) }),
      };
    },
    /** Once the run has finished: staging removed, old results pruned, abandoned runs' results collected. */
    cleanUp: () => output.finish(flags.retentionSeconds),
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

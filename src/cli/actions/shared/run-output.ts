import { stateDir } from "../../../config/paths.js";
import type { ChangesSummary } from "../../../ledger/changes.js";
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
import { brokeOff, notPublished } from "./download-deps.js";

export interface RunOutputFlags extends AfterUploadFlags {
  /** Whether this run keeps its results in the ledger (and reuses from it). */
  ledger: boolean;
  /** --changes FILE|-. */
  changes?: string;
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
    onCollectFailed: (error) =>
      ctx.printer.warn(`the results of abandoned runs could not be collected this time (${error.message}); the next run tries again.`),
  });

  const writeChanges = async (outcome: RunOutcome): Promise<ChangesSummary | undefined> => {
    if (!flags.ledger || (flags.changes === undefined && flags.report === undefined)) return undefined;
    if (flags.changes === undefined) return output.changes(outcome);
    const summary = await output.changes(outcome, {
      format: flags.changes.toLowerCase().endsWith(".xlsx") ? "xlsx" : "csv",
      destination: isStdout(flags.changes)
        ? { stream: dataOut(ctx.io) }
        : { path: absolutePath(ctx, flags.changes), force: Boolean(flags.force) },
    });
    ctx.printer.note(describeChanges(summary, flags.changes));
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

function describeChanges(summary: ChangesSummary, path: string | undefined): string {
  const where = path === undefined || isStdout(path) ? "" : ` (written to ${path})`;
  if (summary.compared === 0) return `Changes: none of these numbers had a previous result in the ledger${where}.`;
  const columns = summary.columns.map((column) => `${column.column} ${count(column.numbers)}`).join(", ");
  return `Changes since the previous check: ${count(summary.numbers)} of ${count(summary.compared)} numbers checked before${columns ? ` (${columns})` : ""}${where}.`;
}

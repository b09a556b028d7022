import { tmpdir } from "node:os";
import { join } from "node:path";
import { stateDir } from "../../../config/paths.js";
import { ChangesTally, changesTable, type ChangesSummary } from "../../../ledger/changes.js";
import { writeTable } from "../../../ledger/export.js";
import { collectAbandonedRuns } from "../../../run/abandoned.js";
import { reusedSources } from "../../../run/reused-results.js";
import { fetchToStaging, Staging } from "../../../run/staging.js";
import type { RunOutcome } from "../../../run/submit-run.js";
import type { ServiceType } from "../../../spec/products.js";
import type { Task } from "../../../spec/task.js";
import type { RunRecord } from "../../../store/store.js";
import type { StagedResults } from "../../../tasks/download.js";
import type { UploadResult } from "../../../tasks/submit.js";
import { count } from "../../../format-count.js";
import type { Context } from "../../context.js";
import { dataOut } from "../../io.js";
import { absolutePath } from "../../paths.js";
import { tasksGoOn, type AfterUploadFlags } from "./after-upload.js";
import { isStdout } from "./destination.js";
import { brokeOff, notPublished } from "./download-deps.js";
import { downloadToOutput } from "./download-output.js";
import { joinToOutput } from "./join-output.js";
import { joinFormat, resultFormat } from "./output-format.js";
import { reportFromResults } from "./report-output.js";

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
 * A run's output: each task's result fetched into the run's staging area as the task
 * finishes (and recorded in the ledger), then, once every task has, the output written
 * from the staged results and the ledger's reused ones (-o, --join), the changes since
 * each number's previous check (--changes), the report (--report); then staging is
 * removed, results past the retention pruned, and the results of abandoned runs whose
 * tasks have finished since collected into the ledger.
 */
export function runOutput(ctx: Context, flags: RunOutputFlags) {
  const wantsResults = flags.output !== undefined || flags.report !== undefined || flags.changes !== undefined;
  /** With --wait, results are fetched as tasks finish: for the output, or for the ledger alone. */
  const fetchesResults = Boolean(flags.wait) && (flags.ledger || wantsResults);
  /** Opened by the first task that finishes; tasks finish concurrently, so they share the one opening. */
  let opening: Promise<Staging> | undefined;
  let staging: Staging | undefined;

  const stage = async (result: UploadResult, run: RunRecord): Promise<void> => {
    const store = await ctx.store();
    opening ??= Staging.open(stagingRoot(ctx, flags.ledger), run.id, store);
    staging = await opening;
    await fetchToStaging(
      {
        client: await ctx.client(),
        product: flags.product,
        sleep: ctx.sleep,
        signal: ctx.signal,
        onRestart: (error) => ctx.printer.note(brokeOff(error)),
        onWait: (taskId, ms) => ctx.printer.note(notPublished(taskId, ms)),
        ...(flags.ledger ? { ledger: { store, now: ctx.now } } : {}),
      },
      staging,
      result,
    ).catch((error: unknown) => {
      throw tasksGoOn(error);
    });
  };

  /** The run's results as the output reads them: its tasks' staged files, then the ledger's reused rows. */
  const stagedResults = async (outcome: RunOutcome): Promise<StagedResults> => {
    const store = await ctx.store();
    const refOf = new Map(outcome.results.map((result) => [result.task.id, result.upload.ref]));
    const dates = await store.checkedAtOf([...refOf.values()]);
    const now = new Date(ctx.now()).toISOString();
    return {
      product: flags.product,
      settings: outcome.prepared.settings,
      tasks: outcome.results.map((result) => result.task),
      read: (task: Task) => staging!.read(task),
      checkedAt: (task: Task) => dates.get(refOf.get(task.id)!) ?? now,
      reused: reusedSources(store, outcome.reused, outcome.reusedTasks),
    };
  };

  const writeChanges = async (outcome: RunOutcome): Promise<ChangesSummary | undefined> => {
    if (!flags.ledger || (flags.changes === undefined && flags.report === undefined)) return undefined;
    const tally = new ChangesTally();
    const table = changesTable(
      await ctx.store(),
      outcome.results.map((result) => result.upload.ref),
      tally,
    );
    if (flags.changes === undefined) {
      for await (const _row of table) void _row;
    } else {
      const format = flags.changes.toLowerCase().endsWith(".xlsx") ? "xlsx" : "csv";
      await writeTable(
        table,
        format,
        isStdout(flags.changes) ? { stream: dataOut(ctx.io) } : { path: absolutePath(ctx, flags.changes), force: Boolean(flags.force) },
      );
    }
    const summary = tally.summary();
    if (flags.changes !== undefined) ctx.printer.note(describeChanges(summary, flags.changes));
    return summary;
  };

  return {
    fetchesResults,
    stage,
    /** Writes what the flags ask for once the run's tasks are submitted (and, with --wait, finished). */
    async write(outcome: RunOutcome): Promise<void> {
      const ids = outcome.results.map((result) => result.task.id);
      if (!flags.wait) {
        ctx.printer.note(
          ids.length > 0
            ? `Next: bulkcheck wait ${ids.join(" ")}   then: bulkcheck download ${ids.join(" ")} -o results.csv`
            : "Every number has a fresh result in the ledger, so no task was needed. Write them with --wait -o FILE.",
        );
        return;
      }
      const staged = staging || ids.length === 0 ? await stagedResults(outcome) : undefined;
      const changes = await writeChanges(outcome).catch((error: unknown) => {
        throw tasksGoOn(error);
      });
      await writeOutput(ctx, ids, flags, staged, changes).catch((error: unknown) => {
        throw tasksGoOn(error);
      });
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
    /** Once the run has finished: its staged files go, old results are pruned, abandoned runs' results are collected. */
    async cleanUp(): Promise<void> {
      await staging?.remove();
      const store = await ctx.store();
      if (flags.ledger && flags.retentionSeconds !== undefined) {
        await store.prune(new Date(ctx.now() - flags.retentionSeconds * 1000).toISOString());
      }
      if (!flags.ledger) return;
      // The run's own output is written: a result that cannot be collected now is collected by a later run.
      const collected = await collectAbandonedRuns({
        store,
        scope: await ctx.scope(),
        client: await ctx.client(),
        sleep: ctx.sleep,
        signal: ctx.signal,
        now: ctx.now,
      }).catch((error: unknown) => {
        ctx.printer.warn(
          `the results of abandoned runs could not be collected this time (${(error as Error).message}); the next run tries again.`,
        );
        return 0;
      });
      if (collected > 0)
        ctx.printer.note(`Kept in the ledger the results of ${count(collected)} task(s) of abandoned runs that finished since.`);
    },
  };
}

/** Where a run's results wait for its output: the state directory, or (ledger off: no number there) the temp directory. */
function stagingRoot(ctx: Context, ledger: boolean): string {
  if (ledger) return join(stateDir(ctx.env), "staging");
  return join(tmpdir(), `bulkcheck-staging-${process.getuid?.() ?? "user"}`);
}

function describeChanges(summary: ChangesSummary, path: string | undefined): string {
  const where = path === undefined || isStdout(path) ? "" : ` (written to ${path})`;
  if (summary.compared === 0) return `Changes: none of these numbers had a previous result in the ledger${where}.`;
  const columns = summary.columns.map((column) => `${column.column} ${count(column.numbers)}`).join(", ");
  return `Changes since the previous check: ${count(summary.numbers)} of ${count(summary.compared)} numbers checked before${columns ? ` (${columns})` : ""}${where}.`;
}

/** -o (plain or --join) and --report, from the run's staged results. */
async function writeOutput(
  ctx: Context,
  ids: readonly string[],
  flags: RunOutputFlags,
  staged: StagedResults | undefined,
  changes: ChangesSummary | undefined,
): Promise<void> {
  const report = flags.report;
  if (flags.output === undefined) {
    if (report !== undefined) await reportFromResults(ctx, ids, report, flags.force, { staged, changes });
    else ctx.printer.note(ids.length > 0 ? `Done. Download with: bulkcheck download ${ids.join(" ")} -o results.csv` : "Done.");
    return;
  }
  if (flags.join && flags.sourcePath) {
    await joinToOutput(ctx, ids, { ...flags, join: flags.sourcePath, format: joinFormat(ctx, flags) }, staged);
    if (report !== undefined) await reportFromResults(ctx, ids, report, flags.force, { staged, changes });
    return;
  }
  await downloadToOutput(ctx, ids, { ...flags, format: resultFormat(ctx, flags) }, staged, changes);
}

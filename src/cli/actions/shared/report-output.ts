import type { ChangesSummary } from "../../../ledger/changes.js";
import { reportHtml, writeReportFile, type ReadResults, type ReportContext } from "../../../report/write-report.js";
import { recordedList, runResults } from "../../../outputs/whole-runs.js";
import type { RunRecord } from "../../../store/store.js";
import { downloadResults, type StagedResults } from "../../../tasks/download.js";
import { withTempDir } from "../../../temp-dir.js";
import type { Context } from "../../context.js";
import { dataOut } from "../../io.js";
import { absolutePath } from "../../paths.js";
import { isStdout } from "./destination.js";
import { downloadDeps } from "./download-deps.js";

/** What a run's own output knows beyond its tasks' ids: its staged results, the changes since each number's previous check, and its record. */
export interface OutputOfRun {
  staged?: StagedResults | undefined;
  changes?: ChangesSummary | undefined;
  record?: RunRecord | undefined;
}

/** What was written: the report's file (absent for stdout), and the rows and tasks it covers. */
export interface WrittenReport {
  path?: string;
  tasks: number;
  rows: number;
}

/**
 * Writes the HTML report of finished tasks whose results were just read: to `path`
 * (atomically), or to stdout when `path` is `-` or absent.
 */
export async function writeReport(
  ctx: Context,
  path: string | undefined,
  read: ReadResults,
  force: boolean | undefined,
  context: ReportContext = {},
): Promise<WrittenReport> {
  const deps = await downloadDeps(ctx);
  const html = await reportHtml({ origins: deps.origins, prices: await ctx.prices(), now: ctx.now }, read, context);
  const written = { tasks: read.tasks.length, rows: read.summary.rows };
  if (isStdout(path)) {
    dataOut(ctx.io).write(html);
    return written;
  }
  await writeReportFile(absolutePath(ctx, path), html, Boolean(force));
  ctx.printer.note(`Wrote the report to ${path}.`);
  return { path: absolutePath(ctx, path), ...written };
}

/**
 * Reads the tasks' results only to count them (nothing is written), and writes the
 * report: `bulkcheck report`, and --report without -o (or with --join, whose rows are
 * not counted by result column). A run's own report reads its staged results; tasks
 * given by id are completed to their whole runs, the results the runs took from the
 * ledger included (see runResults), so the report describes what the runs' output holds.
 */
export async function reportFromResults(
  ctx: Context,
  taskIds: readonly string[],
  path: string | undefined,
  force?: boolean,
  run: OutputOfRun = {},
): Promise<WrittenReport> {
  const deps = await downloadDeps(ctx);
  const read = async (ids: readonly string[], more: { staged?: StagedResults; reused?: StagedResults["reused"] }) => {
    const outcome = await downloadResults({ ...deps, ...more }, ids, { force: false, format: "csv", colour: false });
    return { summary: outcome.summary, tasks: outcome.tasks };
  };
  const context = { changes: run.changes, run: run.record };
  if (run.staged) return writeReport(ctx, path, await read(taskIds, { staged: run.staged }), force, context);
  const [store, scope] = await Promise.all([ctx.store(), ctx.scope()]);
  return withTempDir(async (dir) => {
    const whole = await runResults({ store, scope, dir, signal: ctx.signal }, taskIds, recordedList);
    if (whole.added.length > 0) {
      ctx.printer.note(
        `Reporting the whole run: ${whole.added.join(", ")} ${whole.added.length === 1 ? "is a part" : "are parts"} of the same run as ${taskIds.join(", ")}.`,
      );
    }
    const unreadLists = whole.unfound.map(({ run: unread }) => unread.source.path ?? "standard input");
    const results = await read(whole.ids, whole.reused.length > 0 ? { reused: whole.reused } : {});
    return writeReport(ctx, path, results, force, { ...context, ...(unreadLists.length > 0 ? { unreadLists } : {}) });
  });
}

import type { ChangesSummary } from "../../../ledger/changes.js";
import { reportHtml, writeReportFile, type ReadResults, type ReportContext } from "../../../report/write-report.js";
import { reportResults } from "../../../outputs/report-results.js";
import type { RunRecord } from "../../../store/store.js";
import type { StagedResults } from "../../../tasks/download.js";
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
 * Writes the report of these tasks (see reportResults for what it reads: a run's own
 * staged results, or the tasks completed to their whole runs), saying when parts of the
 * same run were added.
 */
export async function reportFromResults(
  ctx: Context,
  taskIds: readonly string[],
  path: string | undefined,
  force?: boolean,
  run: OutputOfRun = {},
): Promise<WrittenReport> {
  const [deps, store, scope] = await Promise.all([downloadDeps(ctx), ctx.store(), ctx.scope()]);
  const { read, unreadLists } = await reportResults(taskIds, {
    ...deps,
    store,
    scope,
    ...(run.staged ? { staged: run.staged } : {}),
    onEvent: ({ given, added }) =>
      ctx.printer.note(
        `Reporting the whole run: ${added.join(", ")} ${added.length === 1 ? "is a part" : "are parts"} of the same run as ${given.join(", ")}.`,
      ),
  });
  return writeReport(ctx, path, read, force, {
    changes: run.changes,
    run: run.record,
    ...(unreadLists.length > 0 ? { unreadLists } : {}),
  });
}

import type { ChangesSummary } from "../../../ledger/changes.js";
import { reportHtml, writeReportFile, type ReadResults } from "../../../report/write-report.js";
import { downloadResults, type StagedResults } from "../../../tasks/download.js";
import type { Context } from "../../context.js";
import { dataOut } from "../../io.js";
import { absolutePath } from "../../paths.js";
import { isStdout } from "./destination.js";
import { downloadDeps } from "./download-deps.js";

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
  changes?: ChangesSummary,
): Promise<WrittenReport> {
  const deps = await downloadDeps(ctx);
  const html = await reportHtml({ origins: deps.origins, prices: await ctx.prices(), now: ctx.now }, read, changes);
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
 * not counted by result column).
 */
export async function reportFromResults(
  ctx: Context,
  taskIds: readonly string[],
  path: string | undefined,
  force?: boolean,
  run: { staged?: StagedResults | undefined; changes?: ChangesSummary | undefined } = {},
): Promise<WrittenReport> {
  const deps = { ...(await downloadDeps(ctx)), ...(run.staged ? { staged: run.staged } : {}) };
  const outcome = await downloadResults(deps, taskIds, { force: false, format: "csv", colour: false });
  return writeReport(ctx, path, { summary: outcome.summary, tasks: outcome.tasks }, force, run.changes);
}

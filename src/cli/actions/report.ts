import { writeReportOutput } from "../../outputs/output-files.js";
import type { Context } from "../context.js";
import { absolutePath } from "../paths.js";
import { readIds } from "../read-ids.js";
import { checkOutputs, isStdout } from "./shared/destination.js";
import { outputDeps } from "./shared/output-deps.js";

export interface ReportOptions {
  output?: string;
  force?: boolean;
}

/**
 * Reads the finished tasks' results to count them (nothing else is written) and
 * writes one self-contained HTML page: no script, nothing fetched, printable.
 * With --json and a file, prints {path, tasks, rows}.
 */
export async function reportAction(ctx: Context, ids: string[], options: ReportOptions): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  await checkOutputs(ctx, { "-o": options.output }, { force: options.force });
  const read = await writeReportOutput(taskIds, options.output, Boolean(options.force), {}, await outputDeps(ctx, {}));
  if (ctx.globals.json && !isStdout(options.output)) {
    ctx.printer.json({ path: absolutePath(ctx, options.output), tasks: read.tasks.length, rows: read.summary.rows });
  }
}

import type { Context } from "../context.js";
import { readIds } from "../read-ids.js";
import { checkOutputs } from "./shared/destination.js";
import { reportFromResults } from "./shared/report-output.js";

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
  const written = await reportFromResults(ctx, taskIds, options.output, options.force);
  if (ctx.globals.json && written.path !== undefined) ctx.printer.json(written);
}

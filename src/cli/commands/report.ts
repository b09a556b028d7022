import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { readIds } from "../read-ids.js";
import { examples, requestTimeoutOption, timeoutOption } from "./shared/help.js";

export interface ReportOptions {
  output?: string;
  force?: boolean;
}

/** `bulkcheck report <ids...>`. Tests pass their own `run` to see what the flags parse into. */
export function reportCommand(invoke: Invoke, run = reportRun) {
  return new Command("report")
    .description("write an HTML report of finished tasks: the run, the local preparation, money, and the results as charts")
    .argument("<ids...>", "task ids, or - to read them from stdin")
    .option("-o, --output <file>", "destination file, or - for stdout (default: stdout)")
    .option("--force", "overwrite an existing file")
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText(
      "after",
      examples([
        "bulkcheck report $ID -o report.html",
        "bulkcheck status --json | jq -r .id | bulkcheck report - -o report.html",
        "chromium --headless --print-to-pdf=report.pdf report.html",
      ]),
    )
    .action((ids, options, cmd) => invoke(cmd, (ctx) => run(ctx, ids, options)));
}

/**
 * Reads the finished tasks' results to count them (nothing else is written) and
 * writes one self-contained HTML page: no script, nothing fetched, printable.
 * With --json and a file, prints {path, tasks, rows}.
 */
export async function reportRun(ctx: Context, ids: string[], options: ReportOptions): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  const { checkOutputs } = await import("./shared/destination.js");
  await checkOutputs(ctx, { "-o": options.output }, { force: options.force });
  // The report and result handling are loaded when a report runs, not with the command tree.
  const { reportFromResults } = await import("./shared/report-output.js");
  const written = await reportFromResults(ctx, taskIds, options.output, options.force);
  if (ctx.globals.json && written.path !== undefined) ctx.printer.json(written);
}

import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { readIds } from "../read-ids.js";
import type { DownloadFlags } from "./shared/download-output.js";
import { examples, formatOption, requestTimeoutOption, safeCsvOption, timeoutOption } from "./shared/help.js";

export interface DownloadOptions extends DownloadFlags {
  join?: string;
  /** With --join: neutralise the source's formula-like cells too. */
  safeCsv?: boolean;
}

/** `bulkcheck download <ids...>`. Tests pass their own `run` to see what the flags parse into. */
export function downloadCommand(invoke: Invoke, run = downloadRun) {
  return new Command("download")
    .description("download results (always with the spec's header row); several ids are merged")
    .argument("<ids...>", "task ids, or - to read them from stdin")
    .option("-o, --output <file>", "destination file, or - for stdout (default: stdout)")
    .option("--force", "overwrite an existing file")
    .addOption(formatOption())
    .option("--join <source>", "write the source file's rows with the result columns beside them")
    .addOption(safeCsvOption())
    .option("--strict", "exit 9 when the row count disagrees with the task's success_cnt (the output is still written)")
    .option("--report <file.html>", "also write an HTML report of the run (self-contained, printable)")
    .option("--no-ledger", "keep nothing of these results in the ledger")
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText(
      "after",
      examples([
        "bulkcheck download $ID -o results.csv",
        "bulkcheck download $ID --join crm.csv -o crm-checked.csv",
        "bulkcheck download $ID --join crm.xlsx -o crm-checked.xlsx",
        "bulkcheck download $ID --format jsonl | jq .",
        "bulkcheck download $ID -o results.xlsx --report report.html",
      ]),
    )
    .action((ids, options, cmd) => invoke(cmd, (ctx) => run(ctx, ids, options)));
}

export async function downloadRun(ctx: Context, ids: string[], options: DownloadOptions): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  if (options.join === undefined) {
    // Result handling is loaded when a download runs, not with the command tree.
    const { downloadToOutput } = await import("./shared/download-output.js");
    await downloadToOutput(ctx, taskIds, options);
    return;
  }
  const { joinFormat } = await import("./shared/output-format.js");
  const format = joinFormat(ctx, options);
  const { checkReportFlags } = await import("./shared/report-flags.js");
  checkReportFlags(options);
  const { checkOutputs } = await import("./shared/destination.js");
  await checkOutputs(ctx, { "-o": options.output, "--report": options.report }, { force: options.force, reading: [options.join] });
  const reporting = options.report === undefined ? undefined : await import("./shared/report-output.js");
  // The join re-reads the source with libphonenumber-js (~90 ms to load): only --join pays for it.
  const { joinToOutput } = await import("./shared/join-output.js");
  await joinToOutput(ctx, taskIds, { ...options, join: options.join, format });
  // The join does not count rows by result column: the report reads the results once more.
  await reporting?.reportFromResults(ctx, taskIds, options.report, options.force);
}

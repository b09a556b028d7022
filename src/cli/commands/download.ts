import { Command } from "../commander.js";
import { parseOutputPath } from "../parse-flags.js";
import type { Invoke } from "../context.js";
import { addNotifyOptions, examples, formatOption, requestTimeoutOption, safeCsvOption, timeoutOption } from "./shared/help.js";
import type { downloadAction } from "../actions/download.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/download.js");

/** `bulkcheck download <ids...>`. Tests pass their own `act` to see what the flags parse into. */
export function downloadCommand(invoke: Invoke, act: typeof downloadAction = async (...args) => (await actions()).downloadAction(...args)) {
  const command = new Command("download")
    .description("download results (always with the spec's header row); several ids are merged")
    .argument("<ids...>", "task ids, or - to read them from stdin")
    .option("-o, --output <file>", "destination file, or - for stdout (default: stdout)", parseOutputPath)
    .option("--force", "overwrite an existing file")
    .addOption(formatOption())
    .option("--join <source>", "write the source file's rows with the result columns beside them")
    .addOption(safeCsvOption())
    .option("--strict", "exit 9 when the row count disagrees with the task's success_cnt (the output is still written)")
    .option("--report <file.html>", "also write an HTML report of the run (self-contained, printable)", parseOutputPath)
    .option("--no-ledger", "keep nothing of these results in the ledger")
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption());
  return addNotifyOptions(command)
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
    .action((ids, options, cmd) => invoke(cmd, (ctx) => act(ctx, ids, options)));
}

import { Command } from "../commander.js";
import { parseOutputPath } from "../parse-flags.js";
import type { Invoke } from "../context.js";
import { examples, requestTimeoutOption, timeoutOption } from "./shared/help.js";
import type { reportAction } from "../actions/report.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/report.js");

/** `bulkcheck report <ids...>`. Tests pass their own `act` to see what the flags parse into. */
export function reportCommand(invoke: Invoke, act: typeof reportAction = async (...args) => (await actions()).reportAction(...args)) {
  return new Command("report")
    .description(
      "write an HTML report of finished tasks and their runs: the local preparation, the output (reused and checked now), money, and the results as charts",
    )
    .argument("<ids...>", "task ids, or - to read them from stdin")
    .option("-o, --output <file>", "destination file, or - for stdout (default: stdout)", parseOutputPath)
    .option("--force", "overwrite an existing file")
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText(
      "after",
      examples([
        "bulkcheck report $ID -o report.html",
        "bulkcheck status --json --query id | bulkcheck report - -o report.html",
        "chromium --headless --print-to-pdf=report.pdf report.html",
      ]),
    )
    .action((ids, options, cmd) => invoke(cmd, (ctx) => act(ctx, ids, options)));
}

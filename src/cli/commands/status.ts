import { Command } from "../commander.js";
import type { Invoke } from "../context.js";
import { parseCount } from "../parse-flags.js";
import { examples, requestTimeoutOption, timeoutOption } from "./shared/help.js";
import type { statusAction } from "../actions/status.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/status.js");

/** `bulkcheck status [ids...]`. Tests pass their own `act` to see what the flags parse into. */
export function statusCommand(invoke: Invoke, act: typeof statusAction = async (...args) => (await actions()).statusAction(...args)) {
  return new Command("status")
    .description("show tasks (default: every task of this service and profile in the local store, newest first)")
    .argument("[ids...]", "task ids")
    .option("--limit <n>", "without ids, show at most the n most recent tasks", parseCount)
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText("after", examples(["bulkcheck status", "bulkcheck status --limit 5", "bulkcheck status 3f2a... --json --query status"]))
    .action((ids, options, cmd) => invoke(cmd, (ctx) => act(ctx, ids, options)));
}

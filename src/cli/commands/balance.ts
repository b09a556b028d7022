import { Command } from "../commander.js";
import type { Invoke } from "../context.js";
import { examples, requestTimeoutOption, timeoutOption } from "./shared/help.js";
import type { balanceAction } from "../actions/balance.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/balance.js");

/** `bulkcheck balance`. */
export function balanceCommand(invoke: Invoke, act: typeof balanceAction = async (...args) => (await actions()).balanceAction(...args)) {
  return new Command("balance")
    .description("show the account balance, and what this store's unfinished tasks hold reserved")
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText("after", examples(["bulkcheck balance", "bulkcheck balance --json --query balance_micros"]))
    .action((_options, cmd) => invoke(cmd, (ctx) => act(ctx)));
}

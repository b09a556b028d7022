import { Command } from "../commander.js";
import type { Invoke } from "../context.js";
import { addNotifyOptions, examples, intervalOption, requestTimeoutOption, timeoutOption } from "./shared/help.js";
import type { waitAction } from "../actions/wait.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/wait.js");

/** `bulkcheck wait <ids...>`. Tests pass their own `act` to see what the flags parse into. */
export function waitCommand(invoke: Invoke, act: typeof waitAction = async (...args) => (await actions()).waitAction(...args)) {
  const command = new Command("wait")
    .description("wait until tasks finish (exit 0 all succeeded, 6 one failed, 8 timed out)")
    .argument("<ids...>", "task ids, or - to read them from stdin")
    .addOption(intervalOption())
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption());
  return addNotifyOptions(command)
    .addHelpText(
      "after",
      examples([
        "bulkcheck wait $ID --timeout 3600",
        "bulkcheck submit list.txt --type carrier_batch --yes | bulkcheck wait -",
        "bulkcheck wait $ID --on-done 'notify-send bulkcheck done'",
      ]),
    )
    .action((ids, options, cmd) => invoke(cmd, (ctx) => act(ctx, ids, options)));
}

import { Command } from "../commander.js";
import type { Invoke } from "../context.js";
import { addNotifyOptions, addReserveAndWaitOptions, examples } from "./shared/help.js";
import type { retryFailedAction } from "../actions/retry-failed.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/retry-failed.js");

/** `bulkcheck retry-failed <id>`. Tests pass their own `act` to see what the flags parse into. */
export function retryFailedCommand(
  invoke: Invoke,
  act: typeof retryFailedAction = async (...args) => (await actions()).retryFailedAction(...args),
) {
  const command = new Command("retry-failed")
    .description("submit a new task with the numbers of a task that got no result")
    .argument("<ids...>", "task ids (one retry each), or - to read them from stdin")
    .option("--resubmit", "no longer needed: a retry that finished is followed by a new one when asked again (accepted and ignored)")
    .option("--dry-run", "show what would be submitted");
  return addNotifyOptions(addReserveAndWaitOptions(command), "with --wait: ")
    .addHelpText("after", examples(["bulkcheck retry-failed $ID --yes", "bulkcheck retry-failed $ID --wait -o retried.csv"]))
    .action((ids, options, cmd) => invoke(cmd, (ctx) => act(ctx, ids, options)));
}

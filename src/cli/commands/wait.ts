import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { readIds } from "../read-ids.js";
import { taskJson } from "../task-view.js";
import { examples, intervalOption, requestTimeoutOption, timeoutOption } from "./shared/help.js";
import { waitAndReport, type WaitFlags } from "./shared/waiting.js";

/** `bulkcheck wait <ids...>`. Tests pass their own `run` to see what the flags parse into. */
export function waitCommand(invoke: Invoke, run = waitRun) {
  return new Command("wait")
    .description("wait until tasks finish (exit 0 all succeeded, 6 one failed, 8 timed out)")
    .argument("<ids...>", "task ids, or - to read them from stdin")
    .addOption(intervalOption())
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText(
      "after",
      examples(["bulkcheck wait $ID --timeout 3600", "bulkcheck submit list.txt --type carrier_batch --yes | bulkcheck wait -"]),
    )
    .action((ids, options, cmd) => invoke(cmd, (ctx) => run(ctx, ids, options)));
}

/** Waits, then prints each task's final status (id and status, or JSON) on stdout. */
export async function waitRun(ctx: Context, ids: string[], options: WaitFlags): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  const tasks = await waitAndReport(ctx, taskIds, options);
  for (const task of tasks) {
    if (ctx.globals.json) ctx.printer.json(taskJson(task));
    else ctx.printer.data(`${task.id}\t${task.status}`);
  }
}

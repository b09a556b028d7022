import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { parseCount } from "../parse-flags.js";
import { readIds } from "../read-ids.js";
import { printTable } from "../table.js";
import { TASK_COLUMNS, taskJson, taskRow } from "../task-view.js";
import { examples, requestTimeoutOption, timeoutOption } from "./shared/help.js";

export interface StatusOptions {
  limit: number;
}

/** `bulkcheck status [ids...]`. Tests pass their own `run` to see what the flags parse into. */
export function statusCommand(invoke: Invoke, run = statusRun) {
  return new Command("status")
    .description("show tasks (default: the most recent ones from the local journal)")
    .argument("[ids...]", "task ids")
    .option("--limit <n>", "how many recent tasks to show without ids", parseCount, 10)
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText("after", examples(["bulkcheck status", "bulkcheck status 3f2a... --json | jq .status"]))
    .action((ids, options, cmd) => invoke(cmd, (ctx) => run(ctx, ids, options)));
}

/** One check per task; without ids, the most recent tasks from the journal. */
export async function statusRun(ctx: Context, ids: string[], options: StatusOptions): Promise<void> {
  const taskIds =
    ids.length > 0 ? await readIds(ctx, ids) : await (await ctx.journal()).recentTaskIds(await ctx.journalScope(), options.limit);
  if (taskIds.length === 0) {
    ctx.printer.note(
      `No tasks of profile "${ctx.profileName}" in the local journal yet. Submit one with: bulkcheck submit <file> --type <service_type> --country <CC>`,
    );
    return;
  }
  const client = await ctx.client();
  const tasks = [];
  for (const id of taskIds) tasks.push(await client.checkTask(id));
  if (ctx.globals.json) {
    for (const task of tasks) ctx.printer.json(taskJson(task));
    return;
  }
  printTable(ctx.printer, TASK_COLUMNS, tasks.map(taskRow));
}

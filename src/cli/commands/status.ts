import type { Context } from "../context.js";
import { readIds } from "../read-ids.js";
import { printTable } from "../table.js";
import { TASK_COLUMNS, taskJson, taskRow } from "../task-view.js";

export interface StatusOptions {
  limit: number;
}

/** One check per task; without ids, the most recent tasks from the journal. */
export async function statusCommand(ctx: Context, ids: string[], options: StatusOptions): Promise<void> {
  const taskIds = ids.length > 0 ? await readIds(ctx, ids) : await (await ctx.journal()).recentTaskIds(options.limit, ctx.profileName);
  if (taskIds.length === 0) {
    ctx.printer.note(`No tasks of profile "${ctx.profileName}" in the local journal yet. Submit one with: bulkcheck submit <file> --type <service_type> --country <CC>`);
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

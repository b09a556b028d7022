import type { Context } from "../context.js";
import { readIds } from "../read-ids.js";
import { taskJson } from "../views/task-view.js";
import { waitAndReport, type WaitFlags } from "./shared/waiting.js";

/** Waits, then prints each task's final status (id and status, or JSON) on stdout. */
export async function waitAction(ctx: Context, ids: string[], options: WaitFlags): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  ctx.outcome.addTasks(taskIds);
  const tasks = await waitAndReport(ctx, taskIds, options);
  ctx.outcome.charge(tasks, await ctx.prices());
  for (const task of tasks) {
    if (ctx.globals.json) ctx.printer.json(taskJson(task));
    else ctx.printer.data(`${task.id}\t${task.status}`);
  }
}

import { existsSync } from "node:fs";
import { noteSeenTasks } from "../../../run/uploads.js";
import type { Task } from "../../../spec/task.js";
import { sqlitePath } from "../../../store/location.js";
import { StoreUnavailableError } from "../../../store/store.js";
import type { Context } from "../../context.js";

/**
 * Tells the store what a command's checks saw of its tasks (see noteSeenTasks), so that
 * `balance` stops counting a reservation once anything has seen its task finish. Only a
 * store that exists: a state directory without one submitted nothing, and is not created
 * for a check. A team's store out of reach is passed over (the service's answer stands;
 * `balance` says when the store cannot be read).
 */
export async function noteSeen(ctx: Context, tasks: readonly Task[]): Promise<void> {
  if (tasks.every((task) => task.status === "processing")) return;
  const path = sqlitePath(await ctx.storeLocation());
  if (path !== undefined && !existsSync(path)) return;
  try {
    await noteSeenTasks(await ctx.store(), await ctx.scope(), tasks, ctx.now);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    ctx.printer.debug(`the store was not told what this check saw: ${error.message}`);
  }
}

/** A task's check that tells the store what it saw (see noteSeen). */
export function noteEachCheck(ctx: Context, checkTask: (id: string) => Promise<Task>): (id: string) => Promise<Task> {
  return async (id) => {
    const task = await checkTask(id);
    await noteSeen(ctx, [task]);
    return task;
  };
}

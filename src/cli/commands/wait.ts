import { InterruptedError, PendingError, TaskFailedError, UsageError } from "../../errors.js";
import type { Task } from "../../spec/task.js";
import { DEFAULT_LIMITS } from "../../spec/products.js";
import { waitForTasks } from "../../tasks/wait.js";
import type { Context } from "../context.js";
import { createProgress } from "../progress.js";
import { isLoopback } from "../services.js";
import { describeTask, taskJson } from "../task-view.js";
import { readIds } from "../read-ids.js";

export interface WaitFlags {
  interval?: number;
  timeout?: number;
}

/** Default interval against a local sandbox, where the 30-second floor does not apply. */
const LOCAL_INTERVAL_SECONDS = 1;

export async function waitCommand(ctx: Context, ids: string[], flags: WaitFlags): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  const tasks = await waitAndReport(ctx, taskIds, flags);
  for (const task of tasks) {
    if (ctx.globals.json) ctx.printer.json(taskJson(task));
    else ctx.printer.data(`${task.id}\t${task.status}`);
  }
}

/** Polling interval in ms: the spec's 30-second floor, relaxed only for a loopback (sandbox) base URL. */
export async function pollInterval(ctx: Context, seconds: number | undefined): Promise<number> {
  const local = isLoopback(await ctx.baseUrl());
  const floor = DEFAULT_LIMITS.pollFloorSeconds;
  if (seconds !== undefined && seconds < floor && !local) {
    throw new UsageError(`--interval ${seconds} is too short: the service allows one check per task every ${floor} seconds.`, {
      hint: `Use --interval ${floor} or more (shorter intervals are allowed only against a local sandbox).`,
    });
  }
  return (seconds ?? (local ? LOCAL_INTERVAL_SECONDS : floor)) * 1000;
}

/**
 * Waits for the tasks, showing progress on stderr, and throws the outcome's
 * error (failed → 6, timed out → 8, Ctrl-C → 130) after the final states are known.
 */
export async function waitAndReport(ctx: Context, taskIds: readonly string[], flags: WaitFlags): Promise<Task[]> {
  const client = await ctx.client();
  const intervalMs = await pollInterval(ctx, flags.interval);
  const progress = await createProgress(ctx.printer, ctx.env);
  const started = ctx.now();
  const seen = new Map<string, string>();
  const resume = `bulkcheck wait ${taskIds.join(" ")}`;
  try {
    const outcome = await waitForTasks({
      checkTask: (id) => client.checkTask(id),
      ids: taskIds,
      intervalMs,
      timeoutMs: flags.timeout === undefined ? undefined : flags.timeout * 1000,
      now: ctx.now,
      sleep: ctx.sleep,
      random: ctx.random,
      signal: ctx.signal,
      onCheck(task) {
        const line = describeTask(task);
        if (seen.get(task.id) !== line) progress.persist(line);
        seen.set(task.id, line);
        const elapsed = Math.round((ctx.now() - started) / 1000);
        progress.update(`waiting for ${taskIds.length} task(s), ${elapsed}s elapsed`);
      },
      onTransientError(id, error) {
        progress.persist(`checking ${id} failed (${error.message}); trying again at the next interval`);
      },
    });
    progress.stop();
    const tasks = taskIds.map((id) => outcome.tasks.get(id)).filter((task): task is Task => task !== undefined);
    const failed = tasks.filter((task) => task.status === "failed").map((task) => task.id);
    if (failed.length > 0) {
      throw new TaskFailedError(`${failed.length} task(s) failed: ${failed.join(", ")}. Failed tasks are refunded in full.`, failed, {
        hint: "Submit the list again with --resubmit to try once more.",
      });
    }
    if (outcome.timedOut) {
      const pending = tasks.filter((task) => task.status === "processing").map((task) => task.id);
      throw new PendingError(`Still processing after ${flags.timeout}s: ${pending.join(", ")}.`, pending, {
        hint: `The tasks go on by themselves. Resume with: bulkcheck wait ${pending.join(" ")}`,
      });
    }
    return tasks;
  } catch (error) {
    progress.stop();
    if (ctx.signal.aborted) {
      throw new InterruptedError("Stopped waiting. The tasks are not affected.", { hint: `Resume with: ${resume}`, cause: error });
    }
    throw error;
  }
}

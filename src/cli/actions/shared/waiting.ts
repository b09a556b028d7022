import { isLoopback } from "../../../config/resolve.js";
import { UsageError } from "../../../errors.js";
import { DEFAULT_LIMITS } from "../../../spec/products.js";
import type { Task } from "../../../spec/task.js";
import { waitUntilFinished } from "../../../tasks/wait.js";
import type { Context } from "../../context.js";
import { createProgress } from "../../progress.js";
import { describeTask } from "../../views/task-view.js";
import { noteEachCheck } from "./seen-tasks.js";
import { TaskTally, waitLine } from "../../views/task-tally.js";

export interface WaitFlags {
  interval?: number;
}

/** Default interval against a local sandbox, where the 30-second floor does not apply. */
const LOCAL_INTERVAL_SECONDS = 0.2;

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
 * Waits for the tasks with progress on stderr: a line each time a task changes, and on a
 * terminal a spinner with the tally (tasks finished, numbers checked, elapsed time, the
 * estimate once a task has finished, the next check's countdown); without one, the tally
 * once more whenever a task of several finishes. Throws the outcome's error (failed → 6,
 * timed out → 8, Ctrl-C → 130) once the final states are known.
 */
export async function waitAndReport(ctx: Context, taskIds: readonly string[], flags: WaitFlags): Promise<Task[]> {
  const client = await ctx.client();
  const intervalMs = await pollInterval(ctx, flags.interval);
  const progress = await createProgress(ctx.printer, ctx.env, ctx.now);
  const tally = new TaskTally<string>(
    taskIds.map((id) => [id, undefined]),
    ctx.now(),
  );
  const seen = new Map<string, string>();
  let shown = waitLine(tally, ctx.now(), undefined, false);
  let nextCheckAt: number | undefined;
  const show = () => progress.update(waitLine(tally, ctx.now(), nextCheckAt));
  // The clock and the countdown move every second between checks, on a terminal only.
  const ticker = progress.live ? setInterval(show, 1000) : undefined;
  ticker?.unref();
  try {
    return await waitUntilFinished({
      checkTask: noteEachCheck(ctx, (id) => client.checkTask(id)),
      ids: taskIds,
      intervalMs,
      // --timeout bounds the whole command: the wait gets what is left of it.
      timeoutSeconds: ctx.deadline.seconds,
      timeoutMs: ctx.deadline.remainingMs(),
      now: ctx.now,
      sleep: (ms, signal) => {
        nextCheckAt = ctx.now() + ms;
        show();
        return ctx.sleep(ms, signal);
      },
      random: ctx.random,
      signal: ctx.signal,
      onCheck(task) {
        tally.see(task.id, task, ctx.now());
        const line = describeTask(task);
        if (seen.get(task.id) !== line) progress.persist(line);
        seen.set(task.id, line);
        nextCheckAt = undefined;
        show();
        // Without a terminal, the tally when a task of several finishes: a line per change, no clock ticking.
        const changed = waitLine(tally, ctx.now(), undefined, false);
        if (!progress.live && taskIds.length > 1 && changed !== shown && tally.counts().finished > 0) {
          progress.persist(waitLine(tally, ctx.now()));
        }
        shown = changed;
      },
      onTransientError(id, error) {
        progress.persist(`checking ${id} failed (${error.message}); trying again at the next interval`);
      },
    });
  } finally {
    clearInterval(ticker);
    progress.stop();
  }
}

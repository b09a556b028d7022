import { count } from "../format-count.js";
import type { Task } from "../spec/task.js";
import { MAX_TIMER_MS } from "../config/duration.js";
import type { BulkcheckError } from "../errors.js";
import { InterruptedError, PendingError, TaskFailedError } from "../errors.js";
import { RetryStreak } from "../api/attempts.js";
import { STATUS_CHECK_POLICY, withBudget } from "../api/retry-policies.js";

export interface WaitOptions {
  checkTask: (id: string) => Promise<Task>;
  ids: readonly string[];
  intervalMs: number;
  /** Overall limit; undefined waits until every task has finished. */
  timeoutMs?: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  signal?: AbortSignal;
  /** After every check of a task. */
  onCheck?: (task: Task) => void;
  /** A check failed with a transient error; polling goes on. */
  onTransientError?: (id: string, error: BulkcheckError) => void;
  /** Consecutive failed checks of one task tolerated before giving up (default: the status-check policy's 10). */
  maxConsecutiveErrors?: number;
}

export interface WaitOutcome {
  tasks: Map<string, Task>;
  /** True when the timeout ran out with some task still processing. */
  timedOut: boolean;
}

/**
 * Extra delay between 0 and 10% of the interval: spreads clients out and never polls sooner
 * than asked. Never past what a timer holds, which would fire at once instead (the interval
 * itself is at most that: see config/duration.ts).
 */
export function jittered(intervalMs: number, random: () => number): number {
  return Math.min(MAX_TIMER_MS, Math.round(intervalMs * (1 + random() * 0.1)));
}

/**
 * Polls each unfinished task once per interval until all have finished or the
 * timeout runs out. A check that fails after the client's own retries with a
 * passing condition (maintenance, capacity, connection) is tolerated under the
 * status-check policy: the task itself is not affected, so the next round tries again.
 */
export async function waitForTasks(options: WaitOptions): Promise<WaitOutcome> {
  const tasks = new Map<string, Task>();
  const policy =
    options.maxConsecutiveErrors === undefined
      ? STATUS_CHECK_POLICY
      : withBudget(STATUS_CHECK_POLICY, { maxAttempts: options.maxConsecutiveErrors });
  const failedChecks = new Map(options.ids.map((id) => [id, new RetryStreak(policy, options)]));
  const deadline = options.timeoutMs === undefined ? Infinity : options.now() + options.timeoutMs;
  for (;;) {
    for (const id of options.ids) {
      if (isFinished(tasks.get(id))) continue;
      try {
        const task = await options.checkTask(id);
        failedChecks.get(id)!.succeeded();
        tasks.set(id, task);
        options.onCheck?.(task);
      } catch (error) {
        failedChecks.get(id)!.failed(error);
        options.onTransientError?.(id, error as BulkcheckError);
      }
    }
    if (options.ids.every((id) => isFinished(tasks.get(id)))) return { tasks, timedOut: false };
    const remaining = deadline - options.now();
    if (remaining <= 0) return { tasks, timedOut: true };
    await options.sleep(Math.min(jittered(options.intervalMs, options.random), remaining), options.signal);
  }
}

export interface WaitAllOptions extends WaitOptions {
  /**
   * The limit in seconds as the user gave it, for the message; it is also the
   * limit when `timeoutMs` (what is left of it) is not given. Undefined with no
   * `timeoutMs` waits until every task has finished.
   */
  timeoutSeconds?: number;
}

/**
 * Waits for the tasks and turns the outcome into the error a script can act on,
 * once the final states are known: a failed task → TaskFailedError, time out →
 * PendingError, an aborted wait → InterruptedError. Returns the tasks in the
 * order of `ids` when all succeeded.
 */
export async function waitUntilFinished(options: WaitAllOptions): Promise<Task[]> {
  const { timeoutSeconds, ...waitOptions } = options;
  const timeoutMs = options.timeoutMs ?? (timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000);
  try {
    const outcome = await waitForTasks({ ...waitOptions, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
    const tasks = options.ids.map((id) => outcome.tasks.get(id)).filter((task): task is Task => task !== undefined);
    const failed = tasks.filter((task) => task.status === "failed").map((task) => task.id);
    if (failed.length > 0) throw failedTasksError(failed);
    if (outcome.timedOut) {
      const pending = tasks.filter((task) => task.status === "processing").map((task) => task.id);
      throw new PendingError(`Still processing after ${timeoutSeconds}s: ${pending.join(", ")}.`, pending, {
        hint: `The tasks go on by themselves. Resume with: bulkcheck wait ${pending.join(" ")}`,
      });
    }
    return tasks;
  } catch (error) {
    if (options.signal?.aborted) {
      throw new InterruptedError("Stopped waiting. The tasks are not affected.", {
        hint: `Resume with: bulkcheck wait ${options.ids.join(" ")}`,
        cause: error,
      });
    }
    throw error;
  }
}

/** The outcome of a wait in which some tasks failed (once the final states of all are known). */
export function failedTasksError(failed: readonly string[]): TaskFailedError {
  return new TaskFailedError(`${count(failed.length)} task(s) failed: ${failed.join(", ")}. Failed tasks are refunded in full.`, failed, {
    hint: retryFailedHint(failed),
  });
}

/** What to do about failed tasks (exit 6), as the README's exit-code tables say: check their numbers again in new tasks. */
export function retryFailedHint(taskIds: readonly string[]): string {
  return `Check their numbers again in new tasks: bulkcheck retry-failed ${taskIds.join(" ")}`;
}

export function isFinished(task: Task | undefined): boolean {
  return task !== undefined && task.status !== "processing";
}

import type { Readable } from "node:stream";
import { retrying } from "../api/attempts.js";
import { ResultNotPublishedError } from "../api/errors.js";
import { EXPIRED_LINK_POLICY, RESULT_LINK_POLICY, TRANSFER_POLICY, withBudget } from "../api/retry-policies.js";
import { abortableSleep } from "../api/sleep.js";
import type { ApiClient } from "../api/types.js";
import { PendingError, TaskFailedError } from "../errors.js";
import { checkTaskCounts } from "../results/result-rules.js";
import type { Task } from "../spec/task.js";
import { retryFailedHint } from "./wait.js";

export interface OpenResultOptions {
  client: Pick<ApiClient, "checkTask" | "openResult">;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** Checks made while a finished task's result_url is still absent (default: the result-link policy's 6, about half a minute). */
  absentChecks?: number;
  /** A check made just before, used for the first attempt instead of checking again. */
  initial?: Task;
  /** Called with each fresh check, so the caller sees the latest counts. */
  onTask?: (task: Task) => void;
  /** The result file is not published yet: the next check is in `delayMs`. */
  onWait?: (taskId: string, delayMs: number) => void;
}

/**
 * Opens a task's result with a fresh result_url every time: the link is
 * time-limited, so it is never reused. A missing link is checked again with
 * backoff (the result-link policy); an expired one (403/404/410) triggers one more
 * check for a new link (the expired-link policy).
 */
export async function openTaskResult(taskId: string, options: OpenResultOptions): Promise<Readable> {
  const loop = { sleep: options.sleep, signal: options.signal, now: Date.now, random: Math.random };
  const linkPolicy =
    options.absentChecks === undefined ? RESULT_LINK_POLICY : withBudget(RESULT_LINK_POLICY, { maxAttempts: options.absentChecks });
  let initial = options.initial;
  const checkForLink = async (): Promise<string> => {
    const task = initial ?? (await options.client.checkTask(taskId));
    initial = undefined;
    options.onTask?.(task);
    assertDownloadable(task);
    if (!task.result_url) throw new ResultNotPublishedError(taskId);
    return task.result_url;
  };
  return retrying(
    EXPIRED_LINK_POLICY,
    async () => {
      const url = await retrying(linkPolicy, checkForLink, loop, { onRetry: ({ delayMs }) => options.onWait?.(taskId, delayMs) });
      return (await options.client.openResult(url)).body;
    },
    loop,
  );
}

/**
 * Opens `task`'s result each time it is called: the first time with the link of the
 * check just made (`task` itself), afterwards (a restarted transfer) checked again for
 * a fresh link.
 */
export function resultOpener(task: Task, options: Omit<OpenResultOptions, "initial">): () => Promise<Readable> {
  let initial: Task | undefined = task;
  return () => {
    const first = initial;
    initial = undefined;
    return openTaskResult(task.id, { ...options, initial: first });
  };
}

function assertDownloadable(task: Task): void {
  if (task.status === "failed") {
    throw new TaskFailedError(`Task ${task.id} failed, so it has no result (it was refunded in full).`, [task.id], {
      hint: retryFailedHint([task.id]),
    });
  }
  if (task.status === "processing") throw stillProcessing(task.id);
  // Every check that would lead to its result, a restarted transfer's included.
  checkTaskCounts(task);
}

/** A task asked for its result (or its numbers without one) before it has finished: exit 8, with how to wait for it. */
export function stillProcessing(taskId: string): PendingError {
  return new PendingError(`Task ${taskId} is still processing.`, [taskId], { hint: `Wait for it first: bulkcheck wait ${taskId}` });
}

export interface TransferRetryOptions {
  signal?: AbortSignal;
  /** A transfer broke and is about to start again from a fresh link. */
  onRestart?: (error: Error) => void;
}

/**
 * Runs a whole transfer (every task's result, start to end) again when it breaks
 * midway, under the transfer policy (three attempts); the last break becomes exit 7
 * with what to do.
 */
export async function withTransferRetries<T>(run: () => Promise<T>, options: TransferRetryOptions = {}): Promise<T> {
  const loop = { sleep: abortableSleep, signal: options.signal, now: Date.now, random: Math.random };
  return retrying(TRANSFER_POLICY, run, loop, { onRetry: ({ error }) => options.onRestart?.(error as Error) });
}

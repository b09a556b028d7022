import type { Readable } from "node:stream";
import { ResultUrlExpiredError } from "../api/errors.js";
import type { ConnectionReason } from "../api/retry.js";
import { classifyConnectionError } from "../api/transport.js";
import type { ApiClient } from "../api/types.js";
import { BulkcheckError, PendingError, ServiceUnavailableError, TaskFailedError } from "../errors.js";
import { checkTaskCounts } from "../results/result-rules.js";
import type { Task } from "../spec/task.js";
import { retryFailedHint } from "./wait.js";

export interface OpenResultOptions {
  client: Pick<ApiClient, "checkTask" | "openResult">;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** Checks made while a finished task's result_url is still absent (default 6: about a minute in all). */
  absentChecks?: number;
  /** A check made just before, used for the first attempt instead of checking again. */
  initial?: Task;
  /** Called with each fresh check, so the caller sees the latest counts. */
  onTask?: (task: Task) => void;
  /** The result file is not published yet: the next check is in `delayMs`. */
  onWait?: (taskId: string, delayMs: number) => void;
}

/** First wait when result_url is briefly absent; doubles each time. */
const ABSENT_FIRST_DELAY_MS = 1000;

/**
 * Opens a task's result with a fresh result_url every time: the link is
 * time-limited, so it is never reused. A missing link is checked again with
 * backoff; an expired one (403/404/410) triggers one more check for a new link.
 */
export async function openTaskResult(taskId: string, options: OpenResultOptions): Promise<Readable> {
  const absentChecks = options.absentChecks ?? 6;
  let expiredOnce = false;
  let initial = options.initial;
  for (let check = 1; ; check++) {
    const task = initial ?? (await options.client.checkTask(taskId));
    initial = undefined;
    options.onTask?.(task);
    assertDownloadable(task);
    if (!task.result_url) {
      if (check >= absentChecks) {
        throw new PendingError(`Task ${taskId} succeeded but the service has not published its result file yet.`, [taskId], {
          hint: `Try again in a minute: bulkcheck download ${taskId}`,
        });
      }
      const delayMs = ABSENT_FIRST_DELAY_MS * 2 ** (check - 1);
      options.onWait?.(taskId, delayMs);
      await options.sleep(delayMs, options.signal);
      continue;
    }
    try {
      return (await options.client.openResult(task.result_url)).body;
    } catch (error) {
      if (!(error instanceof ResultUrlExpiredError) || expiredOnce) throw error;
      expiredOnce = true;
    }
  }
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

/**
 * A transfer that broke midway (connection reset or closed, a truncated body, a
 * stalled one) is worth starting again from a fresh link; a BulkcheckError already
 * says what went wrong. The codes are the API client's own (classifyConnectionError).
 */
function isBrokenTransfer(error: unknown): boolean {
  if (error instanceof BulkcheckError) return error.kind === "unavailable";
  return BROKEN_TRANSFER.has(classifyConnectionError(error).reason);
}

const BROKEN_TRANSFER: ReadonlySet<ConnectionReason> = new Set(["reset", "closed", "timeout"]);

/** Whole-download attempts when the transfer breaks midway (each with a fresh link). */
const TRANSFER_ATTEMPTS = 3;

export interface TransferRetryOptions {
  signal?: AbortSignal;
  /** A transfer broke and is about to start again from a fresh link. */
  onRestart?: (error: Error) => void;
}

/**
 * Runs a whole transfer (every task's result, start to end) again when it breaks
 * midway, up to three times; the last break becomes exit 7 with what to do.
 */
export async function withTransferRetries<T>(run: () => Promise<T>, options: TransferRetryOptions = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (options.signal?.aborted || !isBrokenTransfer(error)) throw error;
      if (attempt >= TRANSFER_ATTEMPTS) throw brokenOff(error);
      options.onRestart?.(error as Error);
    }
  }
}

/** The last broken transfer as exit 7 with what to do, instead of a raw socket error (exit 1). */
function brokenOff(error: unknown): unknown {
  if (error instanceof BulkcheckError) return error;
  return new ServiceUnavailableError(
    `The download broke off ${TRANSFER_ATTEMPTS} times (${(error as Error).message}); nothing was written.`,
    {
      hint: "Check the connection and run the same command again: downloading costs nothing.",
      cause: error,
    },
  );
}

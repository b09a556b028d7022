/**
 * The one retry loop: runs an attempt, asks the named policy (`retry-policies.ts`) whether
 * the failure is worth another and the pure rules (`nextDelay`) how long to wait, enforces
 * the policy's deadline, sleeps, and reports. Pollers, which wait one interval for many
 * tasks rather than per failure, keep a `RetryStreak` per task: the same decision without
 * the sleep. Written here rather than using undici's retry interceptor, which does not
 * retry POST, drops the envelope body of an error response, caps Retry-After its own way
 * and has no jitter.
 */
import { InterruptedError } from "../errors.js";
import { isRetryable, nextDelay, type RetryFailure, type RetryPolicy } from "./retry.js";

export type RetryPolicyName = "request" | "result-link" | "expired-link" | "transfer" | "status-check";

/** How a retry loop ended without success, for the policy's `exhausted`. */
export interface RetryTally {
  budget: Readonly<RetryPolicy>;
  attempts: number;
  elapsedMs: number;
  /** The wait that would have passed the deadline; null when the attempts ran out. */
  nextDelayMs: number | null;
}

export interface NamedRetryPolicy {
  readonly name: RetryPolicyName;
  readonly budget: Readonly<RetryPolicy>;
  /**
   * The failure as the pure policy sees it, or undefined when this policy never retries it.
   * `replaySafe` is false for a POST without Idempotency-Key: resent only when nothing was sent.
   */
  classify(error: unknown, replaySafe: boolean): RetryFailure | undefined;
  /** What a retryable failure that outlasted the budget becomes (`what` names the operation). */
  exhausted(last: unknown, tally: RetryTally, what: string): unknown;
  /**
   * Whether an abort (Ctrl-C, --timeout) becomes InterruptedError here; otherwise the
   * failure goes up as it is and the caller, which knows what was stopped, says so.
   */
  readonly interruptible: boolean;
}

/** What a loop tells its caller before it waits and tries again. */
export interface UpcomingRetry {
  /** The attempt about to be made, counting from 1 (so 2 for the first retry). */
  attempt: number;
  delayMs: number;
  error: unknown;
  failure: RetryFailure;
  budget: Readonly<RetryPolicy>;
}

export interface RetryClock {
  now: () => number;
  /** Jitter source in [0, 1). */
  random: () => number;
}

export interface LoopDeps extends RetryClock {
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal: AbortSignal | undefined;
}

export interface RetryOptions {
  /** Names the operation in the policy's give-up message, e.g. "GET /api/v1/balance". */
  what?: string;
  /** False for a POST without Idempotency-Key: resent only when the failure proves nothing was sent. Default true. */
  replaySafe?: boolean;
  /** Told before each wait for another attempt. */
  onRetry?: (retry: UpcomingRetry) => void;
}

/**
 * Consecutive failures under one policy: `failed` says how long to wait before the next
 * attempt, or throws what the policy makes of the failure (the failure itself when it is
 * not retryable, the policy's give-up error when the budget is used up); `succeeded`
 * starts the count again.
 */
export class RetryStreak {
  #attempts = 0;
  #started: number | undefined;

  constructor(
    private readonly policy: NamedRetryPolicy,
    private readonly clock: RetryClock,
    private readonly options: Pick<RetryOptions, "what" | "replaySafe"> = {},
  ) {}

  /** @throws the failure, or the policy's give-up error. */
  failed(error: unknown): { delayMs: number; failure: RetryFailure; attempt: number } {
    const { policy, clock } = this;
    this.#started ??= clock.now();
    const attempts = ++this.#attempts;
    const failure = policy.classify(error, this.options.replaySafe ?? true);
    if (failure === undefined || !isRetryable(failure)) throw error;
    const elapsedMs = clock.now() - this.#started;
    const delayMs = nextDelay(failure, attempts, policy.budget, clock.random);
    if (delayMs === null || elapsedMs + delayMs > policy.budget.deadlineMs) {
      throw policy.exhausted(error, { budget: policy.budget, attempts, elapsedMs, nextDelayMs: delayMs }, this.options.what ?? policy.name);
    }
    return { delayMs, failure, attempt: attempts + 1 };
  }

  succeeded(): void {
    this.#attempts = 0;
    this.#started = undefined;
  }
}

/**
 * Calls `attempt(n)` (n from 1) until it resolves or the policy gives up. A wait of 0 is
 * not slept. On abort an interruptible policy throws InterruptedError; the others pass the
 * failure up as it is.
 */
export async function retrying<T>(
  policy: NamedRetryPolicy,
  attempt: (n: number) => Promise<T>,
  deps: LoopDeps,
  options: RetryOptions = {},
): Promise<T> {
  const streak = new RetryStreak(policy, deps, options);
  for (let n = 1; ; n++) {
    if (policy.interruptible) throwIfAborted(deps.signal);
    try {
      return await attempt(n);
    } catch (error) {
      if (deps.signal?.aborted) {
        if (policy.interruptible) throw new InterruptedError("Interrupted.", { cause: error });
        throw error;
      }
      const next = streak.failed(error);
      options.onRetry?.({ ...next, error, budget: policy.budget });
      if (next.delayMs > 0) await sleepOrInterrupt(next.delayMs, deps, policy.interruptible);
    }
  }
}

/** "850 ms", "12 s", "2 min 5 s", "15 min". */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

async function sleepOrInterrupt(ms: number, deps: LoopDeps, interruptible: boolean): Promise<void> {
  try {
    await deps.sleep(ms, deps.signal);
  } catch (error) {
    if (interruptible && deps.signal?.aborted) throw new InterruptedError("Interrupted.", { cause: error });
    throw error;
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError("Interrupted.", { cause: signal.reason });
}

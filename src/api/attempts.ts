/**
 * The retry loop: runs an attempt, asks the pure policy (`nextDelay`) whether and
 * how long to wait, enforces the overall deadline, sleeps, and reports. Written
 * here rather than using undici's retry interceptor, which does not retry POST,
 * drops the envelope body of an error response, caps Retry-After its own way and
 * has no jitter.
 */
import { BulkcheckError, InterruptedError, ProtocolError } from "../errors.js";
import { API_CODE_MEANING } from "../spec/codes.js";
import { ApiError, ConnectionError, HttpStatusError, RetriesExhaustedError } from "./errors.js";
import { isRetryable, nextDelay, type ConnectionReason, type RetryFailure, type RetryPolicy } from "./retry.js";
import type { ClientEvent } from "./types.js";

export interface LoopDeps {
  policy: RetryPolicy;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
  random: () => number;
  signal: AbortSignal | undefined;
  emit: (event: ClientEvent) => void;
}

/**
 * Calls `attempt(n)` (n from 1) until it resolves or fails for good.
 * `replaySafe` is false for a POST without Idempotency-Key.
 * Throws the failure itself when it is not retryable, InterruptedError on abort,
 * and RetriesExhaustedError when a retryable failure outlasts the attempts or the deadline.
 */
export async function withRetries<T>(what: string, replaySafe: boolean, attempt: (n: number) => Promise<T>, deps: LoopDeps): Promise<T> {
  const started = deps.now();
  for (let n = 1; ; n++) {
    throwIfAborted(deps.signal);
    try {
      return await attempt(n);
    } catch (error) {
      if (deps.signal?.aborted) throw new InterruptedError("Interrupted.", { cause: error });
      const failure = toRetryFailure(error, replaySafe);
      if (failure === undefined || !(error instanceof BulkcheckError) || !isRetryable(failure)) throw error;

      const elapsed = deps.now() - started;
      const delay = nextDelay(failure, n, deps.policy, deps.random);
      if (delay === null || elapsed + delay > deps.policy.deadlineMs) {
        if (n === 1 && delay === null) throw error; // retries disabled (maxAttempts 1): the failure speaks for itself
        throw exhausted(what, n, elapsed, delay, deps.policy, error);
      }
      deps.emit({
        type: "retry",
        attempt: n + 1,
        maxAttempts: deps.policy.maxAttempts,
        delayMs: delay,
        reason: describeFailure(error),
        summary: summarizeFailure(error),
        ...askedWait(failure, deps.policy),
      });
      await sleepOrInterrupt(delay, deps);
    }
  }
}

/** Reduces a thrown error to what the policy needs; undefined for errors the loop never retries. */
function toRetryFailure(error: unknown, replaySafe: boolean): RetryFailure | undefined {
  if (error instanceof ApiError) {
    return { type: "api", apiCode: error.apiCode, retryAfterMs: error.retryAfterMs, replaySafe };
  }
  if (error instanceof HttpStatusError) {
    return { type: "http", status: error.status, retryAfterMs: error.retryAfterMs, replaySafe };
  }
  if (error instanceof ConnectionError) {
    return { type: "connection", reason: error.reason, sent: error.sent, replaySafe, local: error.local };
  }
  if (error instanceof ProtocolError) return { type: "protocol" };
  return undefined;
}

/** The wait a server asked for with Retry-After, as the policy applies it (capped), when the retry follows it. */
function askedWait(failure: RetryFailure, policy: RetryPolicy): { askedMs?: number } {
  if ((failure.type !== "api" && failure.type !== "http") || failure.retryAfterMs === undefined) return {};
  return { askedMs: Math.min(Math.max(failure.retryAfterMs, 0), policy.maxRetryAfterMs) };
}

/** What went wrong, for people: "service at capacity (50303)", "service unreachable (ECONNREFUSED)". */
function summarizeFailure(error: BulkcheckError): string {
  if (error instanceof ApiError) return `${RETRY_SUMMARY[error.apiCode] ?? API_CODE_MEANING[error.apiCode] ?? "error"} (${error.apiCode})`;
  if (error instanceof HttpStatusError) return `a gateway answered HTTP ${error.status}`;
  if (error instanceof ConnectionError) return `${CONNECTION_SUMMARY[error.reason]}${error.systemCode ? ` (${error.systemCode})` : ""}`;
  return error.message;
}

const RETRY_SUMMARY: Readonly<Record<number, string>> = {
  42901: "all request slots are occupied",
  50303: "service at capacity",
  50400: "the service timed out the request",
};

const CONNECTION_SUMMARY: Readonly<Record<ConnectionReason, string>> = {
  refused: "service unreachable",
  "connect-timeout": "service unreachable",
  unreachable: "service unreachable",
  dns: "service unreachable",
  reset: "connection lost",
  closed: "connection lost",
  timeout: "no answer in time",
  tls: "secure connection failed",
  other: "request failed",
};

/** A short reason for a retry event, e.g. "42901 all request slots are occupied" or "connection reset (ECONNRESET)". */
function describeFailure(error: BulkcheckError): string {
  if (error instanceof ApiError) return `${error.apiCode} ${API_CODE_MEANING[error.apiCode] ?? "unknown code"}`;
  if (error instanceof HttpStatusError) return `HTTP ${error.status}`;
  if (error instanceof ConnectionError) return `connection ${error.reason}${error.systemCode ? ` (${error.systemCode})` : ""}`;
  return error.message;
}

function exhausted(
  what: string,
  attempts: number,
  elapsedMs: number,
  delay: number | null,
  policy: RetryPolicy,
  last: BulkcheckError,
): RetriesExhaustedError {
  const why =
    delay === null
      ? `the limit of ${policy.maxAttempts} attempts`
      : `the next wait (${formatDuration(delay)}) would pass the ${formatDuration(policy.deadlineMs)} deadline`;
  const message =
    `${what} failed after ${attempts} ${attempts === 1 ? "attempt" : "attempts"} over ${formatDuration(elapsedMs)}; ` +
    `stopped at ${why}. Last failure: ${last.message}`;
  return new RetriesExhaustedError(message, attempts, elapsedMs, last);
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

async function sleepOrInterrupt(ms: number, deps: LoopDeps): Promise<void> {
  try {
    await deps.sleep(ms, deps.signal);
  } catch (error) {
    if (deps.signal?.aborted) throw new InterruptedError("Interrupted.", { cause: error });
    throw error;
  }
  throwIfAborted(deps.signal);
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError("Interrupted.", { cause: signal.reason });
}

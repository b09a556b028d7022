/**
 * The named retry policies: every place bulkcheck tries something again, with its budget
 * (attempts, backoff, deadline), which failures it retries, and what it throws when the
 * budget runs out. The one loop that applies them is `retrying()` in `attempts.ts`; the
 * pure rules (`nextDelay`, `isRetryable`) are in `retry.ts`.
 *
 * | policy | retries | attempts | wait before the next | own deadline | when used up |
 * |---|---|---|---|---|---|
 * | request | 42901, 50303 (Retry-After, capped at 5 min), 50400, HTTP 429/502/503/504, resets, timeouts, refused (not on loopback); a POST without Idempotency-Key only when nothing was sent | 8 | Retry-After, else 1 s, 2 s … 60 s; + up to 20 % jitter | no wait that would end past 15 min from the first attempt | exit 7 (RetriesExhaustedError) |
 * | result-link | a finished task whose result_url is still absent | 6 checks | 1 s, 2 s, 4 s, 8 s, 16 s (31 s in all) | none | exit 8, "not published yet" |
 * | expired-link | a result link that answered 403/404/410 | 2 (one fresh link) | none | none | the expired-link error (exit 7) |
 * | transfer | a download that broke midway (reset, closed, stalled, truncated, or the service unavailable) | 3 | none (a fresh link each time) | none | exit 7, "broke off 3 times" |
 * | status-check | a check that failed with a passing condition (exit 7's kind) after its own request retries | 10 in a row per task | the poll interval (`--interval`, + up to 10 % jitter; the poller's) | none | that check's error (exit 7) |
 *
 * Nesting (outer ⊃ inner), the only one allowed: transfer ⊃ expired-link ⊃ result-link ⊃
 * request, and status-check ⊃ request. No policy runs inside itself, and request is
 * always innermost: it wraps exactly one HTTP exchange (plus at most 5 redirects when
 * opening a result link). Worst cases, every attempt failing as late as it can:
 *
 * - One status check (`checkTask`): request alone, ≤ 8 HTTP requests; its waits end within
 *   15 min, plus the last request's own deadlines (connect 10 s, headers 60 s, body silence
 *   60 s). Polling one task tolerates 10 such checks in a row: ≤ 80 requests and 10 intervals
 *   before it gives up.
 * - One upload (`submitTask`): request alone, ≤ 8 requests within 15 min plus the last
 *   request's deadlines; without an Idempotency-Key, only resends of what was never sent.
 *   The schedule's wait for room after 42900 is not a retry (it waits for this run's own
 *   tasks to finish, polling them as above).
 * - One download of one task: transfer 3 × expired-link 2 × (result-link 6 checks × request 8
 *   + one open × request 8 × 6 with redirects) = 3 × 2 × (48 + 48) = 576 requests; waits
 *   3 × 2 × (31 s + 7 × 15 min) at most. A download of n tasks restarts all of them: n times
 *   that.
 *
 * `--timeout` bounds all of it: it aborts the signal every loop and request listens to,
 * and the command stops with exit 8 (see cli/deadline.ts).
 */
import { BulkcheckError, ProtocolError, ServiceUnavailableError, StoreUnavailableError } from "../errors.js";
import { API_CODE_MEANING } from "../spec/codes.js";
import { formatDuration, type NamedRetryPolicy, type RetryTally, type UpcomingRetry } from "./attempts.js";
import {
  ApiError,
  ConnectionError,
  HttpStatusError,
  ResultNotPublishedError,
  ResultUrlExpiredError,
  RetriesExhaustedError,
} from "./errors.js";
import { classifyConnectionError, DEFAULT_RETRY_POLICY, type ConnectionReason, type RetryFailure, type RetryPolicy } from "./retry.js";
import type { ClientEvent } from "./types.js";

const NO_WAIT = { baseDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 0, jitterRatio: 0 } as const;

/** Each HTTP exchange with the service or a result link. The budget is the client's (ClientOptions.retry). */
export function requestPolicy(budget: Readonly<RetryPolicy> = DEFAULT_RETRY_POLICY): NamedRetryPolicy {
  return { name: "request", budget, classify: classifyRequestFailure, exhausted: requestExhausted, interruptible: true };
}

export const REQUEST_POLICY: NamedRetryPolicy = requestPolicy();

/** A finished task whose result_url is not there yet: checked again, 1 s, 2 s … 16 s apart. */
export const RESULT_LINK_POLICY: NamedRetryPolicy = {
  name: "result-link",
  budget: { maxAttempts: 6, deadlineMs: Infinity, baseDelayMs: 1_000, maxDelayMs: 16_000, maxRetryAfterMs: 0, jitterRatio: 0 },
  classify: (error) => (error instanceof ResultNotPublishedError ? TRANSIENT : undefined),
  exhausted: (last) => last,
  interruptible: false,
};

/** A result link that expired between the check and the download: one more check for a fresh one. */
export const EXPIRED_LINK_POLICY: NamedRetryPolicy = {
  name: "expired-link",
  budget: { maxAttempts: 2, deadlineMs: Infinity, ...NO_WAIT },
  classify: (error) => (error instanceof ResultUrlExpiredError ? TRANSIENT : undefined),
  exhausted: (last) => last,
  interruptible: false,
};

/** A whole transfer (every task's result, start to end) that broke midway, started again at once from fresh links. */
export const TRANSFER_POLICY: NamedRetryPolicy = {
  name: "transfer",
  budget: { maxAttempts: 3, deadlineMs: Infinity, ...NO_WAIT },
  classify: (error) => (isBrokenTransfer(error) ? TRANSIENT : undefined),
  exhausted: brokenOff,
  interruptible: false,
};

/**
 * A task's status check that failed after its own request retries with a passing condition
 * (maintenance, capacity, connection): the task is not affected, so the poller checks it again
 * at its next interval; 10 such failures in a row end the wait with the last one.
 */
export const STATUS_CHECK_POLICY: NamedRetryPolicy = {
  name: "status-check",
  budget: { maxAttempts: 10, deadlineMs: Infinity, ...NO_WAIT },
  classify: (error) => (passing(error) ? TRANSIENT : undefined),
  exhausted: (last) => last,
  interruptible: false,
};

/** The same policy with some of its budget replaced (a test's smaller limit, the user's retry settings). */
export function withBudget(policy: NamedRetryPolicy, overrides: Partial<RetryPolicy>): NamedRetryPolicy {
  return { ...policy, budget: { ...policy.budget, ...overrides } };
}

const TRANSIENT: RetryFailure = { type: "transient" };

/**
 * A failure of the service that passes by itself (maintenance, capacity, connection): what
 * status-check and transfer retry. Not the store's going away (a recorder's query, the
 * ledger's recording): checking or fetching from the service again cannot bring it back, and
 * its own message says what went away.
 */
function passing(error: unknown): error is BulkcheckError {
  return error instanceof BulkcheckError && error.kind === "unavailable" && !(error instanceof StoreUnavailableError);
}

/** Reduces a thrown error to what the request policy needs; undefined for errors it never retries. */
function classifyRequestFailure(error: unknown, replaySafe: boolean): RetryFailure | undefined {
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

function requestExhausted(last: unknown, tally: RetryTally, what: string): unknown {
  // Retries disabled (maxAttempts 1): the failure speaks for itself.
  if (tally.attempts === 1 && tally.nextDelayMs === null) return last;
  const error = last as BulkcheckError;
  const why =
    tally.nextDelayMs === null
      ? `the limit of ${tally.budget.maxAttempts} attempts`
      : `the next wait (${formatDuration(tally.nextDelayMs)}) would pass the ${formatDuration(tally.budget.deadlineMs)} deadline`;
  const message =
    `${what} failed after ${tally.attempts} ${tally.attempts === 1 ? "attempt" : "attempts"} over ${formatDuration(tally.elapsedMs)}; ` +
    `stopped at ${why}. Last failure: ${error.message}`;
  return new RetriesExhaustedError(message, tally.attempts, tally.elapsedMs, error);
}

/**
 * A transfer that broke midway (connection reset or closed, a truncated body, a stalled
 * one) is worth starting again from a fresh link; a BulkcheckError already says what went
 * wrong. The codes are the client's own (classifyConnectionError).
 */
function isBrokenTransfer(error: unknown): boolean {
  if (error instanceof BulkcheckError) return passing(error);
  return BROKEN_TRANSFER.has(classifyConnectionError(error).reason);
}

const BROKEN_TRANSFER: ReadonlySet<ConnectionReason> = new Set(["reset", "closed", "timeout"]);

/** The last broken transfer as exit 7 with what to do, instead of a raw socket error (exit 1). */
function brokenOff(last: unknown, tally: RetryTally): unknown {
  if (last instanceof BulkcheckError) return last;
  return new ServiceUnavailableError(`The download broke off ${tally.attempts} times (${(last as Error).message}); nothing was written.`, {
    hint: "Check the connection and run the same command again: downloading costs nothing.",
    cause: last,
  });
}

/** The client's `retry` event for a request about to be sent again. */
export function requestRetryEvent(retry: UpcomingRetry): Extract<ClientEvent, { type: "retry" }> {
  const error = retry.error as BulkcheckError;
  return {
    type: "retry",
    attempt: retry.attempt,
    maxAttempts: retry.budget.maxAttempts,
    delayMs: retry.delayMs,
    reason: describeFailure(error),
    summary: summarizeFailure(error),
    ...askedWait(retry.failure, retry.budget),
  };
}

/** The wait a server asked for with Retry-After, as the policy applies it (capped), when the retry follows it. */
function askedWait(failure: RetryFailure, policy: Readonly<RetryPolicy>): { askedMs?: number } {
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

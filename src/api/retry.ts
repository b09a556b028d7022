/**
 * The retry policy: which failures are worth another attempt, what a connection
 * failure says about whether the request may have been sent, and how long to wait
 * first. Pure data in, a number out — no clock, no sleeping, no I/O — so every rule
 * is a one-line table test. The named policies (request, result link, transfer,
 * status check) and their budgets are in `retry-policies.ts`; the one loop that
 * applies them is in `attempts.ts`.
 */
import { UsageError } from "../errors.js";
import { ApiCode } from "../spec/codes.js";

export interface RetryPolicy {
  /** Total attempts including the first one. 1 disables retries. */
  maxAttempts: number;
  /** Give up rather than start a wait that would end later than this, measured from the first attempt. */
  deadlineMs: number;
  /** First exponential-backoff step; doubles per attempt. */
  baseDelayMs: number;
  /** Ceiling of one exponential-backoff step. */
  maxDelayMs: number;
  /** Ceiling applied to a server's Retry-After, so a bogus "wait a day" cannot stall a cron job. */
  maxRetryAfterMs: number;
  /** Jitter adds up to this fraction of the wait (never subtracts), to spread out clients woken together. */
  jitterRatio: number;
}

/** The one place retry defaults live. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 8,
  deadlineMs: 15 * 60_000,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  maxRetryAfterMs: 5 * 60_000,
  jitterRatio: 0.2,
});

/**
 * Why a connection-level attempt failed. `sent` on the failure says whether the
 * request may have reached the server, which decides whether a non-replayable
 * POST may be sent again.
 */
export type ConnectionReason =
  | "refused" // ECONNREFUSED: nothing was sent
  | "connect-timeout" // no TCP/TLS connection within connectMs: nothing was sent
  | "unreachable" // ENETUNREACH / EHOSTUNREACH / temporary DNS failure: nothing was sent
  | "reset" // ECONNRESET / EPIPE
  | "closed" // the socket closed before a full response arrived
  | "timeout" // headers or body did not arrive within headersMs / bodyMs
  | "dns" // ENOTFOUND: the host name does not exist; retrying will not help
  | "tls" // certificate or handshake failure; retrying will not help
  | "other";

/** What a failed exchange means for retrying: why it failed, and whether the request may have been delivered. */
export interface ConnectionFailure {
  reason: ConnectionReason;
  sent: boolean;
  systemCode: string | undefined;
}

const NOT_SENT: Readonly<Record<string, ConnectionReason>> = {
  ECONNREFUSED: "refused",
  UND_ERR_CONNECT_TIMEOUT: "connect-timeout",
  ENETUNREACH: "unreachable",
  EHOSTUNREACH: "unreachable",
  ENETDOWN: "unreachable",
  EHOSTDOWN: "unreachable",
  EAI_AGAIN: "unreachable",
  ENOTFOUND: "dns",
};

const MAYBE_SENT: Readonly<Record<string, ConnectionReason>> = {
  ECONNRESET: "reset",
  EPIPE: "reset",
  ECONNABORTED: "reset",
  UND_ERR_SOCKET: "closed", // not UND_ERR_CLOSED: that one means the dispatcher itself was closed
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: "closed", // the body ended short of its Content-Length
  ERR_STREAM_PREMATURE_CLOSE: "closed", // the body stream ended before its end
  ETIMEDOUT: "timeout",
  UND_ERR_HEADERS_TIMEOUT: "timeout",
  UND_ERR_BODY_TIMEOUT: "timeout",
  ERR_BULKCHECK_BODY_DEADLINE: "timeout", // readText's whole-body deadline
  ERR_BULKCHECK_TRANSFER_TOO_SLOW: "timeout", // a result file below the minimum rate (transfer-rate.ts)
};

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/**
 * Classifies an error thrown by undici. Looks through `cause` and AggregateError
 * members (Node's happy-eyeballs connect reports one per address). A failure that
 * cannot be shown to have happened before sending counts as `sent: true`, so a
 * non-replayable POST is never resent on a guess.
 */
export function classifyConnectionError(error: unknown): ConnectionFailure {
  const codes = collectCodes(error);
  // "May have been sent" wins over "not sent" when both appear anywhere in the chain.
  for (const code of codes) {
    const reason = MAYBE_SENT[code];
    if (reason) return { reason, sent: true, systemCode: code };
  }
  for (const code of codes) {
    const reason = NOT_SENT[code];
    if (reason) return { reason, sent: false, systemCode: code };
  }
  const tls = codes.find((code) => TLS_CODE.test(code));
  if (tls) return { reason: "tls", sent: false, systemCode: tls };
  return { reason: "other", sent: true, systemCode: codes[0] };
}

function collectCodes(error: unknown, depth = 0): string[] {
  if (typeof error !== "object" || error === null || depth > 4) return [];
  const record = error as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof record.code === "string" ? [record.code] : [];
  const members = Array.isArray(record.errors) ? record.errors.flatMap((member) => collectCodes(member, depth + 1)) : [];
  return [...own, ...members, ...collectCodes(record.cause, depth + 1)];
}

/** One failed attempt, reduced to what the policy needs to know. */
export type RetryFailure =
  | { type: "api"; apiCode: number; retryAfterMs?: number | undefined; replaySafe: boolean }
  | { type: "http"; status: number; retryAfterMs?: number | undefined; replaySafe: boolean }
  /** `local`: the server is on this machine (a loopback address), where a refused connection means nothing is running. */
  | { type: "connection"; reason: ConnectionReason; sent: boolean; replaySafe: boolean; local?: boolean }
  | { type: "protocol" }
  /** A failure a named policy retries by its own rule (a result link not yet published, a broken transfer): backoff only. */
  | { type: "transient" };

/**
 * 42901 and 50303 say "not charged, wait Retry-After and resend"; 50400 says "not
 * charged, retry". Every other code is an answer that will not change on resend
 * (or, for 42900 and 50300, not within a cron job's patience).
 */
export const RETRYABLE_API_CODES: ReadonlySet<number> = new Set([ApiCode.SLOTS_OCCUPIED, ApiCode.AT_CAPACITY, ApiCode.TIMEOUT]);

/** Statuses of non-envelope answers (proxies, load balancers, result storage) worth a retry. */
export const RETRYABLE_HTTP_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

const RETRYABLE_CONNECTION_REASONS: ReadonlySet<ConnectionReason> = new Set<ConnectionReason>([
  "refused",
  "connect-timeout",
  "unreachable",
  "reset",
  "closed",
  "timeout",
]);

/**
 * How long to wait before the next attempt, or `null` to stop.
 *
 * - `attempt` is the number of attempts already made (1 after the first failure);
 *   no retry once it reaches `policy.maxAttempts`.
 * - A request that is not replay-safe (a POST without Idempotency-Key) is only
 *   resent when the failure proves nothing was sent (connection refused or not
 *   established). A response — even 42901 — proves the request arrived.
 * - Retry-After, when the failure carries one, replaces backoff and is capped at
 *   `maxRetryAfterMs`; otherwise the wait is `baseDelayMs * 2^(attempt-1)` capped
 *   at `maxDelayMs`.
 * - Jitter adds `random() * jitterRatio * max(wait, baseDelayMs)`: it only
 *   lengthens, so a server's Retry-After is never undercut, and a Retry-After of 0
 *   still spreads clients out.
 *
 * The overall deadline needs a clock, so the caller checks it (see `attempts.ts`).
 */
export function nextDelay(failure: RetryFailure, attempt: number, policy: RetryPolicy, random: () => number): number | null {
  if (attempt >= policy.maxAttempts) return null;
  const wait = baseWait(failure, attempt, policy);
  if (wait === null) return null;
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(wait + r * policy.jitterRatio * Math.max(wait, policy.baseDelayMs));
}

/**
 * Whether the failure is worth another attempt at all, ignoring the attempt count
 * and the deadline. The loop uses it to tell "gave up" from "not retryable".
 */
export function isRetryable(failure: RetryFailure): boolean {
  switch (failure.type) {
    case "protocol":
      return false;
    case "transient":
      return true;
    case "api":
      return RETRYABLE_API_CODES.has(failure.apiCode) && failure.replaySafe;
    case "http":
      return RETRYABLE_HTTP_STATUSES.has(failure.status) && failure.replaySafe;
    case "connection":
      // Nothing listening on this machine will not start by itself while we wait: say so at once.
      if (failure.reason === "refused" && failure.local) return false;
      return RETRYABLE_CONNECTION_REASONS.has(failure.reason) && (!failure.sent || failure.replaySafe);
  }
}

function baseWait(failure: RetryFailure, attempt: number, policy: RetryPolicy): number | null {
  if (!isRetryable(failure)) return null;
  if (failure.type === "api" || failure.type === "http") return serverWait(failure.retryAfterMs, attempt, policy);
  return backoff(attempt, policy);
}

function serverWait(retryAfterMs: number | undefined, attempt: number, policy: RetryPolicy): number {
  if (retryAfterMs === undefined) return backoff(attempt, policy);
  return Math.min(Math.max(retryAfterMs, 0), policy.maxRetryAfterMs);
}

/** `baseDelayMs * 2^(attempt-1)`, capped at `maxDelayMs`. */
export function backoff(attempt: number, policy: RetryPolicy): number {
  const exponent = Math.max(attempt - 1, 0);
  return Math.min(policy.baseDelayMs * 2 ** exponent, policy.maxDelayMs);
}

/**
 * Merges overrides onto the defaults and rejects values that would make the loop
 * misbehave (NaN, negatives, zero attempts) instead of silently retrying forever.
 */
export function resolveRetryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY };
  for (const name of Object.keys(DEFAULT_RETRY_POLICY) as (keyof RetryPolicy)[]) {
    const value = overrides[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
      throw new UsageError(`Retry setting ${name} must be a non-negative number, got ${String(value)}.`);
    }
    policy[name] = value;
  }
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new UsageError(`Retry setting maxAttempts must be a whole number of at least 1, got ${policy.maxAttempts}.`);
  }
  return policy;
}

import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import {
  backoff,
  DEFAULT_RETRY_POLICY,
  isRetryable,
  nextDelay,
  resolveRetryPolicy,
  type ConnectionReason,
  type RetryFailure,
  type RetryPolicy,
} from "../../src/api/retry.js";

const policy: RetryPolicy = {
  maxAttempts: 8,
  deadlineMs: 900_000,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  maxRetryAfterMs: 300_000,
  jitterRatio: 0.2,
};
const noJitter = (): number => 0;
const fullJitter = (): number => 1;

const api = (apiCode: number, retryAfterMs?: number, replaySafe = true): RetryFailure => ({
  type: "api",
  apiCode,
  retryAfterMs,
  replaySafe,
});
const conn = (reason: ConnectionReason, sent: boolean, replaySafe = true): RetryFailure => ({
  type: "connection",
  reason,
  sent,
  replaySafe,
});
const http = (status: number, retryAfterMs?: number, replaySafe = true): RetryFailure => ({
  type: "http",
  status,
  retryAfterMs,
  replaySafe,
});

describe("nextDelay", () => {
  it.each([
    ["42901 with Retry-After 7 s waits 7 s", api(42901, 7_000), 1, 7_000],
    ["50303 with Retry-After 30 s waits 30 s", api(50303, 30_000), 3, 30_000],
    ["42901 with Retry-After 0 retries at once", api(42901, 0), 1, 0],
    ["42901 with a Retry-After over the cap waits the cap", api(42901, 3_600_000), 1, 300_000],
    ["42901 without Retry-After backs off (attempt 1)", api(42901), 1, 1_000],
    ["50303 without Retry-After backs off (attempt 3)", api(50303), 3, 4_000],
    ["50400 backs off exponentially (attempt 1)", api(50400), 1, 1_000],
    ["50400 backs off exponentially (attempt 2)", api(50400), 2, 2_000],
    ["50400 backs off exponentially (attempt 4)", api(50400), 4, 8_000],
    ["50400 backoff is capped at maxDelayMs", api(50400), 7, 60_000],
    ["50400 honours a Retry-After when the service sends one", api(50400, 5_000), 1, 5_000],
    ["a refused connection backs off", conn("refused", false), 1, 1_000],
    ["a reset connection on this machine backs off like any other", { ...conn("reset", true), local: true }, 1, 1_000],
    ["a reset connection backs off", conn("reset", true), 2, 2_000],
    ["a closed socket backs off", conn("closed", true), 3, 4_000],
    ["a headers or body timeout backs off", conn("timeout", true), 1, 1_000],
    ["a connect timeout backs off", conn("connect-timeout", false), 1, 1_000],
    ["an unreachable network backs off", conn("unreachable", false), 1, 1_000],
    ["a gateway 502 backs off", http(502), 1, 1_000],
    ["a gateway 503 with Retry-After waits for it", http(503, 9_000), 1, 9_000],
    ["a 429 with Retry-After waits for it", http(429, 2_000), 1, 2_000],
    ["a POST without key may retry a refused connection (nothing was sent)", conn("refused", false, false), 1, 1_000],
    ["a POST without key may retry a connect timeout (nothing was sent)", conn("connect-timeout", false, false), 1, 1_000],
  ])("%s", (_name, failure, attempt, expected) => {
    expect(nextDelay(failure, attempt, policy, noJitter)).toBe(expected);
  });

  it.each([
    ["40000", api(40000)],
    ["40001", api(40001)],
    ["40002", api(40002)],
    ["40100", api(40100)],
    ["40200", api(40200)],
    ["42200", api(42200)],
    ["42900", api(42900, 5_000)],
    ["50300", api(50300, 5_000)],
    ["an unknown code", api(49999)],
    ["a protocol error", { type: "protocol" } satisfies RetryFailure],
    ["a DNS failure", conn("dns", false)],
    ["a TLS failure", conn("tls", false)],
    ["an unclassified connection failure", conn("other", true)],
    ["HTTP 500", http(500)],
    ["HTTP 404", http(404)],
    ["42901 on a POST without key", api(42901, 1_000, false)],
    ["50400 on a POST without key", api(50400, undefined, false)],
    ["a reset on a POST without key", conn("reset", true, false)],
    ["a timeout on a POST without key", conn("timeout", true, false)],
    ["a closed socket on a POST without key", conn("closed", true, false)],
    ["a gateway 502 on a POST without key", http(502, undefined, false)],
    ["a refused connection on this machine (nothing is running there)", { ...conn("refused", false), local: true }],
  ])("never retries %s", (_name, failure) => {
    expect(nextDelay(failure, 1, policy, noJitter)).toBeNull();
    expect(isRetryable(failure)).toBe(false);
  });

  it.each([
    ["backoff", api(50400), 2, 2_000, 2_400],
    ["Retry-After", api(42901, 10_000), 1, 10_000, 12_000],
    ["capped Retry-After", api(42901, 999_999_999), 1, 300_000, 360_000],
    ["Retry-After 0, spread over baseDelayMs", api(42901, 0), 1, 0, 200],
  ])("jitter only lengthens the %s wait", (_name, failure, attempt, low, high) => {
    expect(nextDelay(failure, attempt, policy, noJitter)).toBe(low);
    expect(nextDelay(failure, attempt, policy, fullJitter)).toBe(high);
    const half = nextDelay(failure, attempt, policy, () => 0.5);
    expect(half).toBeGreaterThanOrEqual(low);
    expect(half).toBeLessThanOrEqual(high);
  });

  it("clamps a random source that strays outside [0, 1]", () => {
    expect(nextDelay(api(50400), 1, policy, () => -3)).toBe(1_000);
    expect(nextDelay(api(50400), 1, policy, () => 7)).toBe(1_200);
  });

  it.each([
    [1, 1_000],
    [7, 60_000],
    [8, null],
    [9, null],
  ])("after %i attempts of 8 the next delay is %s", (attempt, expected) => {
    expect(nextDelay(api(50400), attempt, policy, noJitter)).toBe(expected);
  });

  it("never retries when maxAttempts is 1", () => {
    expect(nextDelay(api(42901, 1_000), 1, { ...policy, maxAttempts: 1 }, noJitter)).toBeNull();
  });
});

describe("backoff", () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [6, 32_000],
    [7, 60_000],
    [30, 60_000],
  ])("is %i → %i ms with the default steps", (attempt, expected) => {
    expect(backoff(attempt, policy)).toBe(expected);
  });
});

describe("resolveRetryPolicy", () => {
  it("keeps every default in one frozen constant", () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({
      maxAttempts: 8,
      deadlineMs: 900_000,
      baseDelayMs: 1_000,
      maxDelayMs: 60_000,
      maxRetryAfterMs: 300_000,
      jitterRatio: 0.2,
    });
    expect(Object.isFrozen(DEFAULT_RETRY_POLICY)).toBe(true);
  });

  it("overrides only the settings given", () => {
    expect(resolveRetryPolicy({ maxAttempts: 3, retryAfterIgnored: 1 } as Partial<RetryPolicy>)).toEqual({
      ...DEFAULT_RETRY_POLICY,
      maxAttempts: 3,
    });
  });

  it.each([[{ maxAttempts: 0 }], [{ maxAttempts: 2.5 }], [{ deadlineMs: -1 }], [{ baseDelayMs: Number.NaN }]])(
    "rejects the unusable setting %j with a usage error",
    (overrides) => {
      expect(() => resolveRetryPolicy(overrides)).toThrow(UsageError);
    },
  );
});

import { describe, expect, it } from "vitest";
import { retrying, RetryStreak, type LoopDeps, type UpcomingRetry } from "../../src/api/attempts.js";
import { ApiError, ConnectionError, ResultNotPublishedError, ResultUrlExpiredError, RetriesExhaustedError } from "../../src/api/errors.js";
import {
  EXPIRED_LINK_POLICY,
  REQUEST_POLICY,
  RESULT_LINK_POLICY,
  STATUS_CHECK_POLICY,
  TRANSFER_POLICY,
  withBudget,
} from "../../src/api/retry-policies.js";
import { backoff } from "../../src/api/retry.js";
import { InterruptedError, PendingError, ServiceUnavailableError, UsageError } from "../../src/errors.js";

/** A clock that moves only when the loop sleeps, and records every sleep. */
function fakeLoop(signal?: AbortSignal): LoopDeps & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    random: () => 0,
    signal,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

/** An attempt that throws each of `failures` in turn, then returns "done". */
function script(...failures: unknown[]) {
  let calls = 0;
  return {
    attempt: async (n: number) => {
      calls++;
      expect(n).toBe(calls);
      if (calls <= failures.length) throw failures[calls - 1];
      return "done";
    },
    calls: () => calls,
  };
}

const slotsBusy = (retryAfterMs?: number) => new ApiError(42901, "busy", 429, retryAfterMs);
const reset = (sent: boolean) => new ConnectionError("connection reset", "reset", sent, "ECONNRESET", undefined);
const socketReset = () => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });

describe("retrying under the request policy", () => {
  it("waits what the server asks (Retry-After), else backs off exponentially, and tells each retry", async () => {
    const loop = fakeLoop();
    const retries: UpcomingRetry[] = [];
    const s = script(slotsBusy(7_000), slotsBusy(), slotsBusy());
    expect(await retrying(REQUEST_POLICY, s.attempt, loop, { onRetry: (r) => retries.push(r) })).toBe("done");
    expect(loop.slept).toEqual([7_000, 2_000, 4_000]);
    expect(retries.map((r) => [r.attempt, r.delayMs])).toEqual([
      [2, 7_000],
      [3, 2_000],
      [4, 4_000],
    ]);
  });

  it("stops at its 8 attempts with the exit-7 error that says what failed and why it stopped", async () => {
    const loop = fakeLoop();
    const s = script(...Array.from({ length: 8 }, () => slotsBusy()));
    const failure = retrying(REQUEST_POLICY, s.attempt, loop, { what: "GET /api/v1/balance" });
    await expect(failure).rejects.toBeInstanceOf(RetriesExhaustedError);
    await expect(failure).rejects.toThrow(/^GET \/api\/v1\/balance failed after 8 attempts over .*; stopped at the limit of 8 attempts\./);
    expect(s.calls()).toBe(8);
    expect(loop.slept).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => backoff(n, REQUEST_POLICY.budget)));
  });

  it("does not start a wait that would end past its 15-minute deadline", async () => {
    const loop = fakeLoop();
    const s = script(slotsBusy(300_000), slotsBusy(300_000), slotsBusy(300_000), slotsBusy(300_000));
    await expect(retrying(REQUEST_POLICY, s.attempt, loop)).rejects.toThrow(/the next wait \(5 min\) would pass the 15 min deadline/);
    expect(loop.slept).toEqual([300_000, 300_000, 300_000]);
  });

  it("resends a POST without Idempotency-Key only when the failure proves nothing was sent", async () => {
    const notSent = script(reset(false));
    expect(await retrying(REQUEST_POLICY, notSent.attempt, fakeLoop(), { replaySafe: false })).toBe("done");
    const maybeSent = script(reset(true));
    await expect(retrying(REQUEST_POLICY, maybeSent.attempt, fakeLoop(), { replaySafe: false })).rejects.toThrow("connection reset");
    expect(maybeSent.calls()).toBe(1);
    const answered = script(slotsBusy(0));
    await expect(retrying(REQUEST_POLICY, answered.attempt, fakeLoop(), { replaySafe: false })).rejects.toBeInstanceOf(ApiError);
  });

  it("throws the failure itself when retries are disabled, or when it is never retried", async () => {
    const once = withBudget(REQUEST_POLICY, { maxAttempts: 1 });
    await expect(retrying(once, script(slotsBusy()).attempt, fakeLoop())).rejects.toBeInstanceOf(ApiError);
    await expect(retrying(REQUEST_POLICY, script(new ApiError(40200, "no balance", 200, undefined)).attempt, fakeLoop())).rejects.toThrow(
      ApiError,
    );
  });

  it("does not sleep a wait of 0 ms (Retry-After: 0 without jitter)", async () => {
    const loop = fakeLoop();
    expect(await retrying(REQUEST_POLICY, script(slotsBusy(0)).attempt, loop)).toBe("done");
    expect(loop.slept).toEqual([]);
  });

  it("turns a failure after an abort into InterruptedError, and makes no attempt once aborted", async () => {
    const controller = new AbortController();
    const s = script(slotsBusy());
    const aborting = async (n: number) => {
      controller.abort();
      return s.attempt(n);
    };
    await expect(retrying(REQUEST_POLICY, aborting, fakeLoop(controller.signal))).rejects.toBeInstanceOf(InterruptedError);
    const never = script();
    await expect(retrying(REQUEST_POLICY, never.attempt, fakeLoop(controller.signal))).rejects.toBeInstanceOf(InterruptedError);
    expect(never.calls()).toBe(0);
  });
});

describe("the result-link policy", () => {
  it("checks a link that is not published yet 6 times, 1 s to 16 s apart, then gives up with exit 8's error", async () => {
    const loop = fakeLoop();
    const s = script(...Array.from({ length: 6 }, () => new ResultNotPublishedError("t1")));
    const failure = retrying(RESULT_LINK_POLICY, s.attempt, loop);
    await expect(failure).rejects.toBeInstanceOf(PendingError);
    await expect(failure).rejects.toThrow("Task t1 succeeded but the service has not published its result file yet.");
    expect(loop.slept).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
  });

  it("does not retry anything else", async () => {
    const s = script(new ServiceUnavailableError("down"));
    await expect(retrying(RESULT_LINK_POLICY, s.attempt, fakeLoop())).rejects.toThrow("down");
    expect(s.calls()).toBe(1);
  });
});

describe("the expired-link policy", () => {
  it("gets one fresh link at once, and a second expiry is the expired-link error", async () => {
    const loop = fakeLoop();
    expect(await retrying(EXPIRED_LINK_POLICY, script(new ResultUrlExpiredError("expired", 403)).attempt, loop)).toBe("done");
    const twice = script(new ResultUrlExpiredError("expired", 403), new ResultUrlExpiredError("expired again", 410));
    await expect(retrying(EXPIRED_LINK_POLICY, twice.attempt, loop)).rejects.toThrow("expired again");
    expect(loop.slept).toEqual([]);
  });
});

describe("the transfer policy", () => {
  it("starts a broken transfer again at once, three attempts in all, then says it broke off (exit 7)", async () => {
    const loop = fakeLoop();
    const s = script(socketReset(), socketReset(), socketReset());
    const failure = retrying(TRANSFER_POLICY, s.attempt, loop);
    await expect(failure).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(failure).rejects.toThrow("The download broke off 3 times (socket hang up); nothing was written.");
    expect(s.calls()).toBe(3);
    expect(loop.slept).toEqual([]);
  });

  it("passes the failure up as it is when stopped, instead of calling it an interruption", async () => {
    const controller = new AbortController();
    controller.abort();
    const s = script(socketReset());
    await expect(retrying(TRANSFER_POLICY, s.attempt, fakeLoop(controller.signal))).rejects.toThrow("socket hang up");
    expect(s.calls()).toBe(1);
  });
});

describe("the status-check policy (a RetryStreak per polled task)", () => {
  it("tolerates 9 failed checks in a row and gives up at the 10th with its error", () => {
    const streak = new RetryStreak(STATUS_CHECK_POLICY, fakeLoop());
    for (let n = 1; n < 10; n++) expect(streak.failed(new ServiceUnavailableError(`down ${n}`)).attempt).toBe(n + 1);
    expect(() => streak.failed(new ServiceUnavailableError("down 10"))).toThrow("down 10");
  });

  it("counts only failures in a row: a good check starts the count again", () => {
    const streak = new RetryStreak(STATUS_CHECK_POLICY, fakeLoop());
    for (let n = 1; n < 10; n++) streak.failed(new ServiceUnavailableError("down"));
    streak.succeeded();
    expect(streak.failed(new ServiceUnavailableError("down")).attempt).toBe(2);
  });

  it("does not tolerate a failure that does not pass by itself", () => {
    const streak = new RetryStreak(STATUS_CHECK_POLICY, fakeLoop());
    expect(() => streak.failed(new UsageError("bad id"))).toThrow(UsageError);
  });
});

describe("the budgets the module's doc comment states", () => {
  it("are those of the policies", () => {
    const budgets = Object.fromEntries(
      [REQUEST_POLICY, RESULT_LINK_POLICY, EXPIRED_LINK_POLICY, TRANSFER_POLICY, STATUS_CHECK_POLICY].map((p) => [
        p.name,
        [p.budget.maxAttempts, p.budget.deadlineMs],
      ]),
    );
    expect(budgets).toEqual({
      request: [8, 15 * 60_000],
      "result-link": [6, Infinity],
      "expired-link": [2, Infinity],
      transfer: [3, Infinity],
      "status-check": [10, Infinity],
    });
    const linkWaits = [1, 2, 3, 4, 5].map((n) => backoff(n, RESULT_LINK_POLICY.budget));
    expect(linkWaits.reduce((a, b) => a + b)).toBe(31_000);
    // One download of one task, every attempt failing as late as it can (see retry-policies.ts).
    const perRequest = REQUEST_POLICY.budget.maxAttempts;
    const openWithRedirects = perRequest * 6;
    const perLink = RESULT_LINK_POLICY.budget.maxAttempts * perRequest + openWithRedirects;
    expect(TRANSFER_POLICY.budget.maxAttempts * EXPIRED_LINK_POLICY.budget.maxAttempts * perLink).toBe(576);
    expect(STATUS_CHECK_POLICY.budget.maxAttempts * perRequest).toBe(80);
  });
});

import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ResultUrlExpiredError } from "../../src/api/errors.js";
import {
  InputRejectedError,
  PendingError,
  ServiceUnavailableError,
  StoreUnavailableError,
  TaskFailedError,
  UsageError,
} from "../../src/errors.js";
import { failureFrom, failureMessage } from "../../src/ledger/record-result-file.js";
import type { Task } from "../../src/spec/task.js";
import { openTaskResult, withTransferRetries } from "../../src/tasks/fetch-result.js";

const task = (over: Partial<Task>): Task => ({
  id: "t1",
  product: "carrier_batch",
  status: "success",
  country: "GB",
  total: 1,
  created_at: "",
  ...over,
});

function fakeClient(checks: Task[], expired: Set<string>) {
  const calls = { checks: 0, opened: [] as string[] };
  return {
    calls,
    client: {
      async checkTask() {
        calls.checks++;
        return checks.shift()!;
      },
      async openResult(url: string) {
        calls.opened.push(url);
        if (expired.has(url)) throw new ResultUrlExpiredError("expired", 403);
        return { body: Readable.from(["identifier\n"]) };
      },
    },
  };
}

const noSleep = async () => {};

describe("openTaskResult", () => {
  it("uses a check made just before without checking again", async () => {
    const { client, calls } = fakeClient([], new Set());
    await openTaskResult("t1", { client, sleep: noSleep, initial: task({ result_url: "u1" }) });
    expect(calls).toEqual({ checks: 0, opened: ["u1"] });
  });

  it("checks again for a fresh link when the first one has expired, once", async () => {
    const { client, calls } = fakeClient([task({ result_url: "u2" })], new Set(["u1"]));
    await openTaskResult("t1", { client, sleep: noSleep, initial: task({ result_url: "u1" }) });
    expect(calls).toEqual({ checks: 1, opened: ["u1", "u2"] });
    const again = fakeClient([task({ result_url: "u1" }), task({ result_url: "u1" })], new Set(["u1"]));
    await expect(openTaskResult("t1", { client: again.client, sleep: noSleep })).rejects.toBeInstanceOf(ResultUrlExpiredError);
  });

  it("checks again with growing waits while result_url is absent", async () => {
    const waits: number[] = [];
    const { client } = fakeClient([task({}), task({}), task({ result_url: "u3" })], new Set());
    await openTaskResult("t1", { client, sleep: async (ms) => void waits.push(ms) });
    expect(waits).toEqual([1000, 2000]);
    const never = fakeClient([task({}), task({})], new Set());
    await expect(openTaskResult("t1", { client: never.client, sleep: noSleep, absentChecks: 2 })).rejects.toBeInstanceOf(PendingError);
  });

  it("refuses failed and unfinished tasks", async () => {
    await expect(
      openTaskResult("t1", { client: fakeClient([task({ status: "failed" })], new Set()).client, sleep: noSleep }),
    ).rejects.toBeInstanceOf(TaskFailedError);
    await expect(
      openTaskResult("t1", { client: fakeClient([task({ status: "processing" })], new Set()).client, sleep: noSleep }),
    ).rejects.toBeInstanceOf(PendingError);
  });
});

describe("withTransferRetries", () => {
  const reset = () => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });

  /** A transfer that breaks `breaks` times, then returns "done". */
  function transfer(breaks: number, error: () => Error = reset) {
    let runs = 0;
    return {
      run: async () => {
        if (++runs <= breaks) throw error();
        return "done";
      },
      runs: () => runs,
    };
  }

  it("starts a broken transfer again, saying so each time, until it completes", async () => {
    const t = transfer(2);
    const restarts: string[] = [];
    expect(await withTransferRetries(t.run, { onRestart: (error) => restarts.push(error.message) })).toBe("done");
    expect(t.runs()).toBe(3);
    expect(restarts).toEqual(["socket hang up", "socket hang up"]);
  });

  it("gives up after the third break with exit 7's error, which says what to do", async () => {
    const t = transfer(3);
    const failed = withTransferRetries(t.run);
    await expect(failed).rejects.toThrow(ServiceUnavailableError);
    await expect(failed).rejects.toThrow("The download broke off 3 times (socket hang up); nothing was written.");
    expect(t.runs()).toBe(3);
  });

  it("does not start a transfer again when the store went away, here or in a recording worker: the store's error, never 'broke off' (issue 35, point 9)", async () => {
    const storeGone = () =>
      new StoreUnavailableError("The store at postgres://ana@db.example/team is unavailable (Connection terminated).");
    for (const error of [storeGone, () => failureFrom(structuredClone(failureMessage(storeGone())))]) {
      const t = transfer(1, error);
      const restarts: string[] = [];
      const failed = withTransferRetries(t.run, { onRestart: (restarted) => restarts.push(restarted.message) });
      await expect(failed).rejects.toThrow(StoreUnavailableError);
      await expect(failed).rejects.toThrow("The store at postgres://ana@db.example/team is unavailable (Connection terminated).");
      expect(t.runs()).toBe(1);
      expect(restarts).toEqual([]);
    }
    // The service's own unavailability is still a transfer to start again.
    const service = transfer(1, () => new ServiceUnavailableError("The service is under maintenance."));
    expect(await withTransferRetries(service.run)).toBe("done");
  });

  it("does not run again after an error that is not a broken transfer, or once stopped", async () => {
    const refused = transfer(1, () => new UsageError("no such task"));
    await expect(withTransferRetries(refused.run)).rejects.toThrow(UsageError);
    expect(refused.runs()).toBe(1);
    const controller = new AbortController();
    controller.abort();
    const stopped = transfer(1);
    await expect(withTransferRetries(stopped.run, { signal: controller.signal })).rejects.toThrow("socket hang up");
    expect(stopped.runs()).toBe(1);
  });

  const coded = (code: string) => Object.assign(new Error(code), { code });
  it.each([
    ["a reset connection", coded("ECONNRESET"), true],
    ["a socket closed midway", coded("UND_ERR_SOCKET"), true],
    ["a stalled body", coded("UND_ERR_BODY_TIMEOUT"), true],
    ["a body short of its Content-Length", coded("UND_ERR_RES_CONTENT_LENGTH_MISMATCH"), true],
    ["a body stream closed early", coded("ERR_STREAM_PREMATURE_CLOSE"), true],
    ["a reset found in the cause", Object.assign(new Error("terminated"), { cause: coded("ECONNRESET") }), true],
    ["a service that is unavailable", new ServiceUnavailableError("down"), true],
    ["a refused connection, which a fresh link does not fix", coded("ECONNREFUSED"), false],
    ["an unusable file", new InputRejectedError("bad"), false],
    ["an error without a code", new Error("boom"), false],
  ])("after %s, runs again: %s", async (_name, error, again) => {
    const t = transfer(1, () => error);
    const outcome = await withTransferRetries(t.run).catch(() => "failed");
    expect([outcome, t.runs()]).toEqual(again ? ["done", 2] : ["failed", 1]);
  });
});

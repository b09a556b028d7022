import { PassThrough, type Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { TransferTooSlowError, withMinimumRate } from "../../src/api/transfer-rate.js";
import { classifyConnectionError } from "../../src/api/retry.js";

// Real timers, with windows short enough for a test and margins wide enough for a busy machine.

const timers: NodeJS.Timeout[] = [];
afterEach(() => {
  for (const timer of timers.splice(0)) clearInterval(timer);
});

/** A body that sends `byte` every `everyMs`, forever (a server that drips). */
function dripping(everyMs: number): PassThrough {
  const body = new PassThrough();
  timers.push(setInterval(() => body.write("7"), everyMs));
  return body;
}

/** Reads `guarded` to its end or failure. */
function outcome(guarded: Readable): Promise<string | Error> {
  return text(guarded).catch((error: unknown) => error as Error);
}

describe("withMinimumRate: a result file must keep up 1 KiB/s over each window", () => {
  it("fails a body that drips a byte at a time, as a timeout worth a fresh link, and closes it", async () => {
    const body = dripping(20);
    const failure = await outcome(withMinimumRate(body, 300));
    expect(failure).toBeInstanceOf(TransferTooSlowError);
    expect((failure as Error).message).toMatch(/^only \d+ bytes of the result file arrived in 300 ms, below the minimum of 1 KiB\/s$/);
    expect(classifyConnectionError(failure)).toMatchObject({ reason: "timeout", systemCode: "ERR_BULKCHECK_TRANSFER_TOO_SLOW" });
    expect(body.destroyed).toBe(true);
  });

  it("fails a body that goes silent", async () => {
    const body = new PassThrough();
    body.write("identifier,activated\n");
    expect(await outcome(withMinimumRate(body, 200))).toBeInstanceOf(TransferTooSlowError);
  });

  it("passes a body that arrives at a working rate, whole", async () => {
    const body = new PassThrough();
    const guarded = withMinimumRate(body, 500);
    const sent: string[] = [];
    // 2 KiB every 25 ms: each chunk alone is more than a window asks for.
    timers.push(
      setInterval(() => {
        const chunk = `${"x".repeat(2047)}\n`;
        sent.push(chunk);
        body.write(chunk);
        if (sent.length === 40) body.end();
      }, 25),
    );
    expect(await outcome(guarded)).toBe(sent.join(""));
  });

  it("does not blame the sender for a reader that holds the body back for several windows", async () => {
    const body = new PassThrough();
    const guarded = withMinimumRate(body, 200);
    const content = "x".repeat(4 * 1024 * 1024);
    body.end(content);
    // Nothing is read for five windows: the buffers fill, the sender is paused, and that is the reader's doing.
    await delay(1000);
    expect(await outcome(guarded)).toBe(content);
  });

  it("passes the body's own failure on to the reader", async () => {
    const body = new PassThrough();
    const guarded = withMinimumRate(body, 60_000);
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    setImmediate(() => body.destroy(reset));
    expect(await outcome(guarded)).toBe(reset);
  });
});

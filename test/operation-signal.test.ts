import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { operationSignal } from "../src/operation-signal.js";

describe("operationSignal", () => {
  it("gives each of many operations a signal of its own with one listener on the shared signal, all aborted with its reason", () => {
    const shared = new AbortController();
    const operations = Array.from({ length: 50 }, () => operationSignal(shared.signal));
    for (const { signal } of operations) signal.addEventListener("abort", () => undefined);
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(1);
    const reason = new Error("Terminated.");
    shared.abort(reason);
    expect(operations.map(({ signal }) => signal.reason as unknown)).toEqual(operations.map(() => reason));
  });

  it("forgets an operation once released, and gives one started after the abort an aborted signal", () => {
    const shared = new AbortController();
    const released = operationSignal(shared.signal);
    released.release();
    shared.abort(new Error("Interrupted."));
    expect(released.signal.aborted).toBe(false);
    expect(operationSignal(shared.signal).signal.aborted).toBe(true);
  });
});

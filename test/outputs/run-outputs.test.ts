import { describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/types.js";
import { ResultRecording } from "../../src/ledger/recording.js";
import { RunOutputs, type RunOutputsDeps, type RunOutputsEvent } from "../../src/outputs/run-outputs.js";
import type { RunOutcome } from "../../src/run/submit-request.js";
import type { Store } from "../../src/store/store.js";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");

/** A run's output over a store that notes what is asked of it, and a service that cannot be reached. */
function setup(ledger: boolean) {
  const pruned: string[] = [];
  const events: RunOutputsEvent[] = [];
  let clients = 0;
  const store = {
    ledger: { prune: async (before: string) => void pruned.push(before) },
    tasks: { checkedAt: async () => new Map<number, string>() },
  } as unknown as Store;
  const deps: RunOutputsDeps = {
    store,
    scope: { baseUrl: "http://127.0.0.1:1", profile: "default" },
    client: async (): Promise<ApiClient> => {
      clients++;
      throw new Error("connection refused");
    },
    product: "carrier_batch",
    ledger,
    stateDir: "/nonexistent",
    now: () => NOW,
    sleep: async () => undefined,
    signal: new AbortController().signal,
    onEvent: (event) => events.push(event),
    recording: new ResultRecording({
      location: "/nonexistent/bulkcheck.db",
      env: {},
      now: () => NOW,
      signal: new AbortController().signal,
    }),
  };
  return { output: new RunOutputs(deps), pruned, events, clients: () => clients };
}

const outcome = (taskIds: string[]) =>
  ({
    run: { id: "20260301-120000-abcdef" },
    results: taskIds.map((id, ref) => ({ task: { id }, upload: { ref } })),
    prepared: { settings: { country: "GB" } },
    reused: new Map(),
    reusedTasks: new Map(),
  }) as unknown as RunOutcome;

describe("RunOutputs", () => {
  it("prunes results past the retention once the output is written, and tells (without failing the run) that abandoned runs could not be collected", async () => {
    const { output, pruned, events } = setup(true);
    await output.finish(86_400);
    expect(pruned).toEqual(["2026-02-28T12:00:00.000Z"]);
    expect(events).toEqual([{ type: "collect-failed", error: new Error("connection refused") }]);
  });

  it("with the ledger off keeps nothing, so it prunes nothing and asks the service nothing", async () => {
    const { output, pruned, events, clients } = setup(false);
    await output.finish(86_400);
    expect(pruned).toEqual([]);
    expect(events).toEqual([]);
    expect(clients()).toBe(0);
  });

  it("has no staged results for tasks it did not fetch (the output downloads them), and serves a run without tasks from the ledger alone", async () => {
    const { output } = setup(true);
    expect(await output.results(outcome(["t1"]))).toBeUndefined();
    const fromLedger = await output.results(outcome([]));
    expect(fromLedger).toMatchObject({ product: "carrier_batch", settings: { country: "GB" }, tasks: [], reused: [] });
  });
});

import { afterEach } from "vitest";
import type { ApiClient } from "../../src/api/types.js";
import { resolveLimits } from "../../src/config/resolve.js";
import { ResultRecording } from "../../src/ledger/recording.js";
import { ownLease } from "../../src/run/lease.js";
import type { SubmitRequest, SubmitRunDeps } from "../../src/run/submit-request.js";
import { DEFAULT_PRICE_MICROS, type ServiceType } from "../../src/spec/products.js";
import type { Scope, Store } from "../../src/store/store.js";

/** What a test opens (a sandbox, a store, a client), closed after each test in the reverse order. */
export function closedAfterEach(): Array<{ close(): Promise<void> }> {
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of opened.splice(0).reverse()) await thing.close();
  });
  return opened;
}

/** A run of the GB list at `list` as `bulkcheck submit list --country GB` asks for it, with the ledger on. */
export function gbRunRequest(list: string, product: ServiceType, wait: boolean): SubmitRequest {
  return {
    command: { sourcePath: list, product, country: "GB" },
    product,
    country: "GB",
    prepare: { source: list, country: "GB" },
    dryRun: false,
    maxAgeMs: 3_600_000,
    ledger: true,
    pad: "oldest",
    retryNoResult: false,
    countUnanswered: true,
    wait,
    pollIntervalMs: 1000,
    resumeCommand: `bulkcheck submit ${list}`,
  };
}

/** What submitRun needs of this process, in-process: the real clock, sleeps of at most 50 ms, the default limits but `minTaskSize`. */
export function inProcessRunDeps(
  run: { store: Store; scope: Scope; client: ApiClient; product: ServiceType; workDir: string; minTaskSize?: number },
  more: Partial<SubmitRunDeps> = {},
): SubmitRunDeps {
  const signal = new AbortController().signal;
  return {
    store: run.store,
    scope: run.scope,
    client: () => Promise.resolve(run.client),
    limits: resolveLimits(run.minTaskSize === undefined ? {} : { "min-task-size": run.minTaskSize }),
    priceMicros: DEFAULT_PRICE_MICROS[run.product],
    workDir: run.workDir,
    lease: ownLease(),
    now: Date.now,
    sleep: shortSleep,
    random: Math.random,
    signal,
    recording: new ResultRecording({ location: run.store.location, env: {}, now: Date.now, signal }),
    onEvent: () => undefined,
    ...more,
  };
}

/** A sleep the scheduler may ask for, cut to 50 ms at most: the sandbox answers at once. */
export function shortSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(ms, 50)));
}

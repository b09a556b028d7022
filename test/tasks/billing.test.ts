import { describe, expect, it } from "vitest";
import type { PrepareSummary } from "../../src/prepare/summary.js";
import { taskOrigins } from "../../src/tasks/origins.js";
import { DEFAULT_PRICE_MICROS } from "../../src/spec/products.js";
import type { Task } from "../../src/spec/task.js";
import type { SqliteStore } from "../../src/store/sqlite-store.js";
import type { RunKind, Scope } from "../../src/store/store.js";
import { billing, excludedBeforeUpload, taskCharge } from "../../src/tasks/billing.js";
import { tempStores } from "../helpers/store.js";

const task = (over: Partial<Task>): Task => ({
  id: "t",
  product: "carrier_batch",
  status: "success",
  country: "GB",
  total: 10,
  created_at: "",
  ...over,
});
const prices = { ...DEFAULT_PRICE_MICROS, carrier_batch: 1000 };

const summary = (over: Partial<PrepareSummary>): PrepareSummary => ({
  rows_read: 20,
  submitted_lines: 18,
  kept: 10,
  invalid_cnt: 3,
  no_code_cnt: 0,
  other_country_cnt: 1,
  duplicate_cnt: 4,
  blank: 2,
  national_normalised: 0,
  shared_code_regions: {},
  extensions_dropped: 0,
  spreadsheet_expanded: 0,
  ambiguous: { total: 0, international: 0, national: 0, resolved_by: "convention" as const, votes: { international: 0, national: 0 } },
  encoding: "utf8" as const,
  encoding_source: "detected" as const,
  ...over,
});

const SCOPE: Scope = { baseUrl: "https://api.example.com", profile: "default" };

const openStore = tempStores();

/** Records a finished run of this kind (with the summary of its list, if given) whose parts became these tasks. */
async function storedRun(
  store: SqliteStore,
  runId: string,
  taskIds: readonly string[],
  prepared?: PrepareSummary,
  kind: RunKind = "submit",
) {
  await store.runs.create(
    {
      id: runId,
      scope: SCOPE,
      identity: runId,
      kind,
      state: "finished",
      startedAt: "2026-11-22T00:00:00.000Z",
      product: "carrier_batch",
      source: {},
      settings: {},
      ...(prepared ? { prepared } : {}),
    },
    { host: "here", pid: 1, nonce: "n" },
  );
  for (const [part, taskId] of taskIds.entries()) {
    await store.tasks.add({ scope: SCOPE, runId, part, parts: taskIds.length, taskId, product: "carrier_batch", count: 10 });
  }
}

describe("billing", () => {
  it("charges only checked numbers, refunds the rest and all of a failed task, and sums the service's exclusions", () => {
    const bill = billing(
      [
        task({ id: "a", success_cnt: 8, failure_cnt: 2, invalid_cnt: 1, duplicate_cnt: 3 }),
        task({ id: "b", status: "failed", total: 5 }),
        task({ id: "c", success_cnt: 4, failure_cnt: 6, invalid_cnt: 2 }),
      ],
      prices,
    );
    expect(bill).toEqual({
      chargedMicros: 12_000,
      refundedMicros: 2000 + 5000 + 6000,
      excluded: { invalid_cnt: 3, duplicate_cnt: 3 },
    });
  });

  it("leaves out a task still processing and a product it has no price for", () => {
    expect(billing([task({ status: "processing" }), task({ product: "unknown_batch", success_cnt: 10 })], prices)).toMatchObject({
      chargedMicros: 0,
      refundedMicros: 0,
    });
  });
});

describe("excludedBeforeUpload", () => {
  it("counts the summary a split list's parts share once, and adds up different lists", async () => {
    const store = openStore();
    await storedRun(store, "split", ["part-1", "part-2"], summary({}));
    await storedRun(store, "other", ["other"], summary({ invalid_cnt: 1, duplicate_cnt: 0, blank: 0, other_country_cnt: 0 }));
    const origins = await taskOrigins(store, SCOPE, ["part-1", "part-2", "other"]);
    expect(excludedBeforeUpload(origins.values())).toEqual({
      invalid_cnt: 4,
      no_code_cnt: 0,
      other_country_cnt: 1,
      duplicate_cnt: 4,
      blank: 2,
    });
  });

  it("knows nothing of tasks the store has no summary for", async () => {
    const store = openStore();
    await storedRun(store, "retry", ["retried"], undefined, "retry");
    const origins = await taskOrigins(store, SCOPE, ["retried", "elsewhere"]);
    expect(origins.size).toBe(1);
    expect(excludedBeforeUpload(origins.values())).toBeUndefined();
  });
});

describe("taskCharge", () => {
  const base: Task = {
    id: "f".repeat(32),
    product: "number_high_value_batch",
    status: "success",
    country: "DE",
    total: 900,
    created_at: "2024-01-01T00:00:00Z",
  };

  it.each([
    [
      "a finished task charges successes and refunds the rest of the file",
      { submitted_lines: 1000, success_cnt: 850 },
      1000,
      3_400_000,
      600_000,
    ],
    ["a task without submitted_lines reserves its total", { success_cnt: 900 }, 900, 3_600_000, 0],
  ] as const)("%s", (_name, fields, submitted, chargedMicros, refundedMicros) => {
    expect(taskCharge({ ...base, ...fields })).toEqual({
      priceMicros: 4000,
      submitted,
      charged: fields.success_cnt,
      chargedMicros,
      refundedMicros,
    });
  });

  it("refunds a failed task in full", () => {
    expect(taskCharge({ ...base, status: "failed", submitted_lines: 1000 })).toMatchObject({ chargedMicros: 0, refundedMicros: 4_000_000 });
  });

  it("knows nothing yet about a task still processing", () => {
    expect(taskCharge({ ...base, status: "processing" })).toBeUndefined();
  });

  it("uses the alias's price and an explicit price over the list", () => {
    expect(taskCharge({ ...base, product: "global_carrier_batch", success_cnt: 10 })?.chargedMicros).toBe(10_000);
    expect(taskCharge({ ...base, success_cnt: 10 }, 7)?.chargedMicros).toBe(70);
  });

  it("asks for a price when the product has none listed", () => {
    expect(() => taskCharge({ ...base, product: "mystery_batch", success_cnt: 1 })).toThrow(/No price is known/);
  });
});

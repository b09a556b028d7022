import { describe, expect, it } from "vitest";
import { Journal, type SubmitEntry } from "../../src/journal/journal.js";
import type { PrepareSummary } from "../../src/prepare/summary.js";
import { DEFAULT_PRICE_MICROS } from "../../src/spec/products.js";
import type { Task } from "../../src/spec/task.js";
import { billing, excludedBeforeUpload } from "../../src/tasks/billing.js";
import { tempDir } from "../helpers/cli.js";

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

/** Journals a submitted part with its task id and the summary of its source list. */
async function journalled(journal: Journal, key: string, taskId: string, prepared?: PrepareSummary): Promise<void> {
  const entry: SubmitEntry = {
    type: "submit",
    at: "2026-11-22T00:00:00.000Z",
    base_url: "https://api.example.com",
    profile: "default",
    idempotency_key: key,
    product: "carrier_batch",
    source: {},
    chunk: { index: 0, of: 1, count: 10, sha256: "ab".repeat(32) },
    ...(prepared ? { prepared } : {}),
  };
  await journal.append(entry);
  await journal.append({
    type: "task",
    at: entry.at,
    base_url: entry.base_url,
    profile: "default",
    idempotency_key: key,
    task_id: taskId,
    replayed: false,
  });
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
    const journal = new Journal(tempDir());
    const shared = summary({});
    await journalled(journal, "k1", "part-1", shared);
    await journalled(journal, "k2", "part-2", shared);
    await journalled(journal, "k3", "other", summary({ invalid_cnt: 1, duplicate_cnt: 0, blank: 0, other_country_cnt: 0 }));
    expect(await excludedBeforeUpload(journal, ["part-1", "part-2", "other"])).toEqual({
      invalid_cnt: 4,
      no_code_cnt: 0,
      other_country_cnt: 1,
      duplicate_cnt: 4,
      blank: 2,
    });
  });

  it("knows nothing of tasks the journal has no summary for", async () => {
    const journal = new Journal(tempDir());
    await journalled(journal, "k1", "retried");
    expect(await excludedBeforeUpload(journal, ["retried", "elsewhere"])).toBeUndefined();
  });
});

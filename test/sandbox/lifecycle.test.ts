import { afterEach, describe, expect, it } from "vitest";
import { apiGet, balance, finish, gbNumbers, startHarness, state, submit, type Harness } from "./helpers.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const CRAFTED = [
  "+447400123456", // kept
  "+44 7400 123457", // kept
  "0044 7400 123458", // no country code: the rule asks for "+" or the bare calling code, not an international prefix
  "hello", // invalid
  "+44 7700 900123", // invalid (Ofcom drama range)
  "07400 123459", // no country code
  "+1 212 555 0100", // other country
  "+49 151 12345678", // other country
  "+447400123456", // duplicate
  "447400123457", // duplicate (same identifier, other spelling)
  "",
  "   ",
];

describe("task lifecycle", () => {
  it("classifies a crafted list into kept, invalid, no-code, other-country and duplicate counts after preparation", async () => {
    h = await startHarness({ minTaskSize: 1, numbersPerSecond: 1 });
    const submitted = await submit(h, { serviceType: "number_activity_batch", country: "GB", lines: CRAFTED });
    expect(submitted.body.data).toMatchObject({ status: "processing", preparing: true, submitted_lines: 10, total: 10, invalid_cnt: 0 });
    const id = submitted.body.data.id;
    h.advance(0.4);
    expect((await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data).toMatchObject({ preparing: true, total: 10 });
    h.advance(0.2); // preparation takes 500 ms + 1 ms per 20 lines
    const prepared = (await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data;
    expect(prepared).toMatchObject({
      status: "processing",
      preparing: false,
      submitted_lines: 10,
      total: 2,
      invalid_cnt: 2,
      no_code_cnt: 2,
      other_country_cnt: 2,
      duplicate_cnt: 2,
    });
    expect(prepared).not.toHaveProperty("success_cnt");
    h.advance(1.9); // 2 numbers at 1 per second
    expect((await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data.status).toBe("processing");
    h.advance(0.1);
    const done = (await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data;
    expect(done).toMatchObject({ status: "success", preparing: false, total: 2, success_cnt: 2, failure_cnt: 0 });
  });

  it("classifies a carrier task without country: numbers must carry their own code, any country is kept", async () => {
    h = await startHarness({ minTaskSize: 1 });
    const reply = await submit(h, { serviceType: "carrier_batch", lines: ["+447400123456", "+12125550100", "07400 123459", "nope"] });
    const task = await finish(h, reply.body.data.id);
    // Without a task country no line can be its national number: "07400 123459" is just invalid.
    expect(task).toMatchObject({ country: "", total: 2, no_code_cnt: 0, invalid_cnt: 2, other_country_cnt: 0, success_cnt: 2 });
  });

  it("charges success_cnt × price and refunds the rest when a task succeeds", async () => {
    h = await startHarness({ minTaskSize: 1, noResultRate: 0.3 });
    const lines = [...gbNumbers(200), "junk", "junk", ...gbNumbers(50)]; // 50 duplicates, 2 invalid
    const reply = await submit(h, { serviceType: "number_ecommerce_batch", country: "GB", lines });
    expect(await balance(h)).toBe(10_000_000 - 252 * 3000);
    const task = await finish(h, reply.body.data.id);
    expect(task.total).toBe(200);
    expect(task.success_cnt! + task.failure_cnt!).toBe(200);
    expect(task.failure_cnt).toBeGreaterThan(30);
    expect(task.failure_cnt).toBeLessThan(90);
    expect(await balance(h)).toBe(10_000_000 - task.success_cnt! * 3000);
    const s = await state(h);
    expect(s.reserved_micros).toBe(0);
    expect(s.ledger.map((entry) => [entry.kind, entry.micros])).toEqual([
      ["reserve", 252 * 3000],
      ["charge", task.success_cnt! * 3000],
      ["refund", (252 - task.success_cnt!) * 3000],
    ]);
  });

  it("refunds a failed task in full and reports it failed with no result_url", async () => {
    h = await startHarness({ failRate: 1 });
    const reply = await submit(h, { serviceType: "number_high_value_batch", country: "GB", lines: gbNumbers(500) });
    const task = await finish(h, reply.body.data.id);
    expect(task).toMatchObject({ status: "failed", success_cnt: 0, failure_cnt: 500 });
    expect(task).not.toHaveProperty("result_url");
    expect(await balance(h)).toBe(10_000_000);
    expect((await state(h)).ledger.map((entry) => entry.kind)).toEqual(["reserve", "refund"]);
  });

  it("settles exactly once, on the first observation by any endpoint", async () => {
    h = await startHarness();
    const reply = await submit(h, { serviceType: "number_validation_batch", country: "GB", lines: gbNumbers(500) });
    h.advance(3600);
    await balance(h);
    expect((await state(h)).ledger.map((entry) => entry.kind)).toEqual(["reserve", "charge"]);
    await apiGet(h, `/api/v1/bulk-tasks/${reply.body.data.id}`);
    await apiGet(h, `/api/v1/bulk-tasks/${reply.body.data.id}`);
    expect(h.sandbox.inspect().ledger).toHaveLength(2);
    expect(await balance(h)).toBe(10_000_000 - 500 * 1000);
  });

  it("fails a seeded share of tasks, the same ones for the same seed", async () => {
    const outcomes: string[][] = [];
    for (let run = 0; run < 2; run++) {
      h = await startHarness({ failRate: 0.5, seed: 7, maxUnfinished: 100 });
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500) })).body.data.id);
      h.advance(3600);
      outcomes.push(await Promise.all(ids.map(async (id) => (await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data.status)));
      await h.close();
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(outcomes[0]).toContain("failed");
    expect(outcomes[0]).toContain("success");
  });

  it("counts polls of a processing task less than 30 s apart as fast polls and marks them in the log", async () => {
    h = await startHarness({ numbersPerSecond: 1 });
    const id = (await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500) })).body.data.id;
    h.advance(10);
    await apiGet(h, `/api/v1/bulk-tasks/${id}`); // 10 s after submit: fast
    h.advance(30);
    await apiGet(h, `/api/v1/bulk-tasks/${id}`); // 30 s later: fine
    h.advance(29);
    await apiGet(h, `/api/v1/bulk-tasks/${id}`); // fast
    expect((await state(h)).stats.fast_polls).toBe(2);
    expect(h.logs.filter((line) => line.endsWith("fast-poll"))).toHaveLength(2);
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { balance, gbNumbers, startHarness, state, submit, type Harness } from "./helpers.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

const input = { serviceType: "number_validation_batch", country: "GB", lines: gbNumbers(500) };

describe("Idempotency-Key", () => {
  it("returns the original task for a resent key, marked Idempotent-Replayed, without reserving again", async () => {
    const first = await submit(h, { ...input, idempotencyKey: "k-1" });
    const again = await submit(h, { ...input, idempotencyKey: "k-1" });
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(await balance(h)).toBe(10_000_000 - 500 * 1000);
    const s = await state(h);
    expect(s.tasks).toHaveLength(1);
    expect(s.tasks[0]!.idempotency_key_present).toBe(true);
    expect(s.ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
  });

  it("creates one task and one reservation when two requests with the same key race", async () => {
    const [a, b] = await Promise.all([submit(h, { ...input, idempotencyKey: "race" }), submit(h, { ...input, idempotencyKey: "race" })]);
    expect(a.body.code).toBe(0);
    expect(b.body.code).toBe(0);
    expect(a.body.data.id).toBe(b.body.data.id);
    expect([a, b].filter((reply) => reply.headers["idempotent-replayed"] === "true")).toHaveLength(1);
    const s = await state(h);
    expect(s.tasks).toHaveLength(1);
    expect(s.reserved_micros).toBe(500_000);
  });

  it("answers 40000 conflicting request fields when a key is reused with another service_type or country", async () => {
    await submit(h, { ...input, idempotencyKey: "k-2" });
    const otherType = await submit(h, { ...input, serviceType: "number_activity_batch", idempotencyKey: "k-2" });
    expect(otherType.body.code).toBe(40000);
    expect(otherType.body.msg).toMatch(/conflicting request fields.*service_type/);
    const otherCountry = await submit(h, { ...input, country: "DE", idempotencyKey: "k-2" });
    expect(otherCountry.body.msg).toMatch(/conflicting request fields.*country/);
    expect((await state(h)).tasks).toHaveLength(1);
  });

  it("answers 42200 when a key is replayed with a different file, creating and reserving nothing", async () => {
    const first = await submit(h, { ...input, idempotencyKey: "k-4" });
    const otherFile = await submit(h, { ...input, lines: gbNumbers(501), idempotencyKey: "k-4" });
    expect(otherFile.status).toBe(422);
    expect(otherFile.body).toMatchObject({ code: 42200, msg: "Idempotency-Key reused with a different request" });
    expect(otherFile.headers["idempotent-replayed"]).toBeUndefined();
    const s = await state(h);
    expect(s.tasks.map((task) => task.id)).toEqual([first.body.data.id]);
    expect(s.ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
  });

  it("accepts a 128-character key and rejects a 129-character one with 40000", async () => {
    expect((await submit(h, { ...input, idempotencyKey: "x".repeat(128) })).body.code).toBe(0);
    const long = await submit(h, { ...input, idempotencyKey: "y".repeat(129) });
    expect(long.body.code).toBe(40000);
    expect(long.body.msg).toMatch(/at most|1 to 128/);
    expect((await state(h)).tasks).toHaveLength(1);
  });

  it("replays a finished task in its current state, result_url included", async () => {
    const first = await submit(h, { ...input, idempotencyKey: "k-3" });
    h.advance(3600);
    const again = await submit(h, { ...input, idempotencyKey: "k-3" });
    expect(again.body.data).toMatchObject({ id: first.body.data.id, status: "success", success_cnt: 500 });
    expect(again.body.data.result_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/results\/[0-9a-f]{32}\.csv\?expires=\d+&sig=[0-9a-f]{64}$/);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_PRICE_MICROS, SERVICE_TYPES } from "../../src/spec/products.js";
import { balance, gbNumbers, startHarness, state, submit, type Harness } from "./helpers.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("submitting a task", () => {
  it.each(SERVICE_TYPES)("accepts %s and reserves submitted_lines × its price", async (serviceType) => {
    h = await startHarness();
    const reply = await submit(h, { serviceType, country: "GB", lines: gbNumbers(600) });
    expect(reply.status).toBe(200);
    expect(reply.body.code).toBe(0);
    expect(reply.body.data).toMatchObject({
      product: serviceType,
      status: "processing",
      country: "GB",
      submitted_lines: 600,
      total: 600,
      preparing: true,
    });
    expect(reply.body.data.id).toMatch(/^[0-9a-f]{32}$/);
    expect(reply.body.data.created_at).toBe("2025-01-15T09:00:00.000Z");
    expect(await balance(h)).toBe(10_000_000 - 600 * DEFAULT_PRICE_MICROS[serviceType]);
  });

  it("accepts global_carrier_batch as the carrier product and reports the canonical name", async () => {
    h = await startHarness();
    const reply = await submit(h, { serviceType: "global_carrier_batch", lines: gbNumbers(500) });
    expect(reply.body.code).toBe(0);
    expect(reply.body.data).toMatchObject({ product: "carrier_batch", country: "" });
  });

  it("rejects an unsupported service type with 40000 and reserves nothing", async () => {
    h = await startHarness();
    const reply = await submit(h, { serviceType: "number_magic_batch", country: "GB", lines: gbNumbers(500) });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe(40000);
    expect(await balance(h)).toBe(10_000_000);
  });

  it.each([
    ["a number product without country", { serviceType: "number_activity_batch" }, /country is required/],
    ["country after file", { serviceType: "number_activity_batch", country: "GB", countryAfterFile: true }, /before file/],
    ["an unknown country code", { serviceType: "number_activity_batch", country: "XX" }, /unknown country/],
    ["no file", { serviceType: "number_activity_batch", country: "GB", noFile: true }, /file is required/],
    ["no service_type", { country: "GB" }, /service_type is required/],
  ])("rejects %s with 40000", async (_name, fields, msg) => {
    h = await startHarness();
    const { noFile, ...input } = fields as typeof fields & { noFile?: boolean };
    const reply = await submit(h, { ...input, ...(noFile ? {} : { lines: gbNumbers(500) }) });
    expect(reply.body.code).toBe(40000);
    expect(reply.body.msg).toMatch(msg);
    expect((await state(h)).ledger).toEqual([]);
  });

  it("accepts a lower-case country and reports it upper-cased", async () => {
    h = await startHarness();
    const reply = await submit(h, { serviceType: "number_activity_batch", country: "gb", lines: gbNumbers(500) });
    expect(reply.body.data.country).toBe("GB");
  });

  it("accepts .csv files and rejects other extensions with 42200", async () => {
    h = await startHarness();
    expect((await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500), fileName: "list.CSV" })).body.code).toBe(0);
    const reply = await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500), fileName: "list.xlsx" });
    expect(reply.status).toBe(422);
    expect(reply.body.code).toBe(42200);
  });

  it("rejects a file over maxFileBytes with 42200, charging nothing", async () => {
    h = await startHarness({ maxFileBytes: 4_000 });
    const reply = await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500) });
    expect(reply.body.code).toBe(42200);
    expect(reply.body.msg).toMatch(/larger than 4000 bytes/);
    expect(await balance(h)).toBe(10_000_000);
  });

  it("answers an oversized upload early with 42200 while the client is still sending, and the client keeps working", async () => {
    h = await startHarness({ maxFileBytes: 64 * 1024 });
    const reply = await submit(h, { serviceType: "carrier_batch", content: `${gbNumbers(400_000).join("\n")}\n` }); // ~5.6 MB
    expect(reply.status).toBe(422);
    expect(reply.body.code).toBe(42200);
    expect(await balance(h)).toBe(10_000_000);
  });

  it("rejects too few or too many non-blank lines with 42200, ignoring blank lines", async () => {
    h = await startHarness({ minTaskSize: 10, maxTaskSize: 20 });
    const few = await submit(h, { serviceType: "carrier_batch", content: gbNumbers(9).join("\n\n  \n") });
    expect(few.body.code).toBe(42200);
    expect(few.body.msg).toMatch(/has 9 numbers; a task needs at least 10/);
    const many = await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(21) });
    expect(many.body.code).toBe(42200);
    const edge = await submit(h, { serviceType: "carrier_batch", content: `${gbNumbers(20).join("\r\n")}\r\n\r\n` });
    expect(edge.body.data.submitted_lines).toBe(20);
    expect((await state(h)).tasks).toHaveLength(1);
  });

  it("answers 40200 when the balance cannot cover the reservation, reserving nothing", async () => {
    h = await startHarness({ balanceMicros: 499_999 });
    const reply = await submit(h, { serviceType: "number_validation_batch", country: "GB", lines: gbNumbers(500) });
    expect(reply.status).toBe(402);
    expect(reply.body.code).toBe(40200);
    const s = await state(h);
    expect(s).toMatchObject({ balance_micros: 499_999, reserved_micros: 0, tasks: [], ledger: [] });
  });

  it("never overspends when many submits race for the last of the balance", async () => {
    h = await startHarness({ balanceMicros: 1_000_000, maxInFlight: 20 });
    // Each carrier task of 500 numbers reserves 500,000 micros: exactly two fit.
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500, i * 1000) })),
    );
    expect(replies.filter((r) => r.body.code === 0)).toHaveLength(2);
    expect(replies.filter((r) => r.body.code === 40200)).toHaveLength(8);
    expect(await balance(h)).toBe(0);
  });

  it("answers 42900 once maxUnfinished tasks are still processing", async () => {
    h = await startHarness({ maxUnfinished: 2 });
    const input = { serviceType: "carrier_batch", lines: gbNumbers(500) };
    expect((await submit(h, input)).body.code).toBe(0);
    expect((await submit(h, input)).body.code).toBe(0);
    const third = await submit(h, input);
    expect(third.status).toBe(429);
    expect(third.body.code).toBe(42900);
    h.advance(3600);
    expect((await submit(h, input)).body.code).toBe(0);
  });
});

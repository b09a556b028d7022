import { describe, expect, it } from "vitest";
import { Agent, request } from "undici";
import { SANDBOX_DEFAULTS, parsePrices, startSandbox } from "../../src/sandbox/index.js";
import { gbNumbers, startHarness, state, submit } from "./helpers.js";

describe("options", () => {
  it("parses price overrides, accepting the carrier alias", () => {
    expect(parsePrices("carrier_batch=1500, number_activity_batch=2000")).toEqual({ carrier_batch: 1500, number_activity_batch: 2000 });
    expect(parsePrices("global_carrier_batch=7")).toEqual({ carrier_batch: 7 });
    expect(parsePrices("")).toEqual({});
  });

  it.each([
    ["carrier_batch", /expected service_type=micros/],
    ["carrier_batch=1.5", /expected service_type=micros/],
    ["magic_batch=10", /unknown service type/],
    ["carrier_batch=1,global_carrier_batch=2", /priced twice/],
  ])("rejects the price list %j with a clear message", (text, message) => {
    expect(() => parsePrices(text)).toThrow(message);
  });

  it("makes a 1,000-number demo finish within two seconds by default", () => {
    // Preparation is 500 ms + 1 ms per 20 lines; processing is kept ÷ numbersPerSecond.
    expect(550 + (1000 / SANDBOX_DEFAULTS.numbersPerSecond) * 1000).toBeLessThanOrEqual(2000);
  });

  it.each([
    [{ failRate: 2 }, /failRate/],
    [{ minTaskSize: 10, maxTaskSize: 5 }, /maxTaskSize/],
    [{ resultFormat: "tar" as "csv" }, /resultFormat/],
    [{ chaosFaults: ["meteor" as "drop"] }, /chaosFaults/],
    [{ prices: { carrier_batch: -1 } }, /price for carrier_batch/],
  ])("refuses invalid options %j", async (options, message) => {
    await expect(startSandbox(options)).rejects.toThrow(message);
  });

  it("uses overridden prices for reservations and reports them in the state", async () => {
    const h = await startHarness({ prices: { carrier_batch: 1500 } });
    await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500) });
    const s = await state(h);
    expect(s.prices.carrier_batch).toBe(1500);
    expect(s.reserved_micros).toBe(750_000);
    await h.close();
  });
});

describe("closing", () => {
  it("closes promptly while a keep-alive connection and a slow request are still open", async () => {
    const sandbox = await startSandbox();
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    const headers = { "x-api-key": sandbox.apiKey };
    await (await request(`${sandbox.url}/api/v1/balance`, { headers, dispatcher: agent })).body.text();
    sandbox.scriptFaults([{ route: "balance", fault: "slow", delayMs: 60_000 }]);
    const pending = request(`${sandbox.url}/api/v1/balance`, { headers, dispatcher: agent }).catch((error: Error) => error);
    while (sandbox.inspect().stats.requests < 2) await new Promise((resolve) => setImmediate(resolve));
    await sandbox.close();
    expect(await pending).toBeInstanceOf(Error);
    await agent.close();
  });
});

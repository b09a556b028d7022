import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { request } from "undici";
import { holdSlots } from "../helpers/fault-fixtures.js";
import { gbNumbers, gatedUpload, startHarness, state, submit, type Harness } from "./helpers.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness({ retryAfterSeconds: 2 });
});
afterEach(async () => {
  await h.close();
});

function startUpload(gate: Promise<void>, signal?: AbortSignal) {
  const { body, contentType } = gatedUpload("carrier_batch", "GB", gbNumbers(500), gate);
  return request(`${h.sandbox.url}/api/v1/bulk-tasks`, {
    method: "POST",
    headers: { "x-api-key": h.sandbox.apiKey, "content-type": contentType },
    body,
    dispatcher: h.agent,
    ...(signal ? { signal } : {}),
  });
}

/** Resolves once `condition` holds, checking after each turn of the event loop. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits (by polling the admin state, not by time) until `count` submit slots are in use. */
async function slotsInFlight(count: number, harness = h): Promise<void> {
  await until(async () => (await state(harness)).stats.slots_in_flight === count);
}

describe("request slots", () => {
  it("answers the sixth concurrent upload with 42901 and Retry-After while it is still uploading", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const uploads = Array.from({ length: 5 }, () => startUpload(gate));
    await slotsInFlight(5);
    const sixth = await startUpload(new Promise(() => undefined)); // its body never ends
    expect(sixth.statusCode).toBe(429);
    expect(sixth.headers["retry-after"]).toBe("2");
    expect(((await sixth.body.json()) as { code: number }).code).toBe(42901);
    open();
    const replies = await Promise.all(uploads.map(async (upload) => ((await (await upload).body.json()) as { code: number }).code));
    expect(replies).toEqual([0, 0, 0, 0, 0]);
    await slotsInFlight(0);
    expect((await state(h)).tasks).toHaveLength(5);
  });

  it("frees the slot of an upload the client abandons midway, creating nothing", async () => {
    const gate = new Promise<void>(() => undefined);
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const uploads = controllers.map((controller) => startUpload(gate, controller.signal).catch((error: Error) => error));
    await slotsInFlight(5);
    controllers[0]!.abort();
    expect(await uploads[0]).toBeInstanceOf(Error);
    await slotsInFlight(4);
    for (const controller of controllers.slice(1)) controller.abort();
    await Promise.all(uploads);
    await slotsInFlight(0);
    const s = await state(h);
    expect(s.tasks).toHaveLength(0);
    expect(s.reserved_micros).toBe(0);
  });

  it("takes the slot from an upload that falls silent for uploadIdleSeconds, so the next upload gets it", async () => {
    const quick = await startHarness({ maxInFlight: 1, uploadIdleSeconds: 0.2 });
    try {
      const held = await holdSlots(quick.sandbox.url, quick.sandbox.apiKey, 1);
      try {
        await slotsInFlight(1, quick);
        await slotsInFlight(0, quick);
        const next = await submit(quick, { serviceType: "number_validation_batch", country: "GB", lines: gbNumbers(500) });
        expect(next.body.code).toBe(0);
        expect(quick.logs.some((line) => line.includes("upload-stalled"))).toBe(true);
      } finally {
        held.release();
      }
    } finally {
      await quick.close();
    }
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { request } from "undici";
import { gbNumbers, gatedUpload, startHarness, state, type Harness } from "./helpers.js";

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

/** Waits (by polling the admin state, not by time) until `count` submit slots are in use. */
async function slotsInFlight(count: number): Promise<void> {
  while ((await state(h)).stats.slots_in_flight !== count) await new Promise((resolve) => setImmediate(resolve));
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
});

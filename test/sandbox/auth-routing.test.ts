import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { request } from "undici";
import { apiGet, gbNumbers, startHarness, submit, type Harness } from "./helpers.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

describe("authentication and routing", () => {
  it("answers 40100 with HTTP 401 when the X-API-Key header is missing", async () => {
    const reply = await apiGet(h, "/api/v1/balance", null);
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe(40100);
  });

  it("answers 40100 for a wrong key on every endpoint, including submit and the admin state", async () => {
    for (const path of ["/api/v1/balance", `/api/v1/bulk-tasks/${"a".repeat(32)}`, "/_sandbox/state"]) {
      expect((await apiGet(h, path, "sk_wrong")).body.code).toBe(40100);
    }
    const reply = await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500), apiKey: "sk_wrong" });
    expect(reply.body.code).toBe(40100);
    expect((await apiGet(h, "/_sandbox/state")).body.data).toMatchObject({ tasks: [] });
  });

  it("gives a task's uploaded lines at GET /_sandbox/tasks/{id}/lines, with the key only, and 40000 for an unknown task", async () => {
    const lines = gbNumbers(500);
    const { id } = (await submit(h, { serviceType: "carrier_batch", country: "GB", lines })).body.data;
    const reply = await apiGet<{ id: string; lines: string[] }>(h, `/_sandbox/tasks/${id}/lines`);
    expect(reply.body.data).toEqual({ id, lines });
    expect(h.sandbox.uploadedLines(id)).toEqual(lines);
    expect((await apiGet(h, `/_sandbox/tasks/${id}/lines`, "sk_wrong")).body.code).toBe(40100);
    expect((await apiGet(h, `/_sandbox/tasks/${"0".repeat(32)}/lines`)).body.code).toBe(40000);
  });

  it("generates a random sk_sandbox_ key when none is given", async () => {
    expect(h.sandbox.apiKey).toMatch(/^sk_sandbox_[0-9a-f]{24}$/);
  });

  it("answers an unknown path with HTTP 404 and a 40000 envelope", async () => {
    const reply = await apiGet(h, "/api/v1/nothing-here");
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ code: 40000, data: {} });
  });

  it("answers a well-formed but unknown task id with 404 and a malformed one with 400", async () => {
    const unknown = await apiGet(h, `/api/v1/bulk-tasks/${"0".repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe(40000);
    expect(unknown.body.msg).toMatch(/not found/);
    const malformed = await apiGet(h, "/api/v1/bulk-tasks/XYZ");
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe(40000);
  });

  it("answers a wrong method with 405 and an Allow header", async () => {
    const response = await request(`${h.sandbox.url}/api/v1/balance`, {
      method: "DELETE",
      headers: { "x-api-key": h.sandbox.apiKey },
      dispatcher: h.agent,
    });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe("GET");
    expect(((await response.body.json()) as { code: number }).code).toBe(40000);
  });

  it("wraps every API answer in the envelope with msg success when code is 0", async () => {
    const reply = await apiGet<{ balance_micros: number }>(h, "/api/v1/balance");
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ code: 0, msg: "success", data: { balance_micros: 10_000_000 } });
  });

  it("logs one line per request with method, path, outcome and duration, never the key or a query string", async () => {
    await apiGet(h, "/api/v1/balance?secret=1");
    await apiGet(h, "/api/v1/balance", "sk_wrong_key_value");
    await submit(h, { serviceType: "number_validation_batch", country: "GB", lines: gbNumbers(500), idempotencyKey: "idem-secret-123" });
    await h.close();
    expect(h.logs).toHaveLength(3);
    expect(h.logs[0]).toMatch(/^GET \/api\/v1\/balance code=0 \d+ms$/);
    expect(h.logs[1]).toMatch(/^GET \/api\/v1\/balance code=40100 /);
    expect(h.logs[2]).toMatch(/^POST \/api\/v1\/bulk-tasks code=0 /);
    const all = h.logs.join("\n");
    for (const secret of [h.sandbox.apiKey, "sk_wrong_key_value", "secret=1", "?", "idem-secret-123"]) expect(all).not.toContain(secret);
  });
});

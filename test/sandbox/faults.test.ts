import { describe, expect, it } from "vitest";
import { request } from "undici";
import { CHAOS_FAULT_KINDS } from "../../src/sandbox/faults.js";
import { FAULT_KINDS, type FaultKind } from "../../src/sandbox/index.js";
import { apiGet, download, finish, gbNumbers, state, submit, submitForm, type Harness, trackedHarnesses } from "./helpers.js";

const harness = trackedHarnesses();

const INPUT = { serviceType: "number_validation_batch", country: "GB", lines: gbNumbers(500) };

/** Raw submit: status, headers and body text, or the client-side error when the socket was cut. */
async function rawSubmit(h: Harness, idempotencyKey?: string) {
  try {
    const response = await request(`${h.sandbox.url}/api/v1/bulk-tasks`, {
      method: "POST",
      headers: { "x-api-key": h.sandbox.apiKey, ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}) },
      body: submitForm(INPUT),
      dispatcher: h.agent,
    });
    return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
  } catch (error) {
    return { error: error as Error };
  }
}

async function expectNothingCharged(h: Harness): Promise<void> {
  const s = await state(h);
  expect(s.tasks).toEqual([]);
  expect(s.ledger).toEqual([]);
  expect(s.balance_micros).toBe(s.start_balance_micros);
}

describe("scripted faults", () => {
  it.each([
    ["42901", 429, "1"],
    ["50303", 503, "1"],
    ["50400", 504, undefined],
    ["50300", 503, undefined],
    ["42900", 429, undefined],
  ] as const)("answers a submit with envelope %s (HTTP %i) and charges nothing", async (fault, status, retryAfter) => {
    const h = await harness();
    h.sandbox.scriptFaults([{ route: "submit", fault }]);
    const reply = await rawSubmit(h);
    expect(reply.status).toBe(status);
    expect(reply.headers?.["retry-after"]).toBe(retryAfter);
    expect(JSON.parse(reply.text!)).toMatchObject({ code: Number(fault) });
    await expectNothingCharged(h);
    expect((await submit(h, INPUT)).body.code).toBe(0);
  });

  it("sends a scripted raw Retry-After value, such as an HTTP date, as given", async () => {
    const h = await harness();
    const date = "Wed, 15 Jan 2025 09:00:05 GMT";
    h.sandbox.scriptFaults([{ route: "check", fault: "42901", retryAfter: date }]);
    const reply = await apiGet(h, `/api/v1/bulk-tasks/${"a".repeat(32)}`);
    expect(reply.headers["retry-after"]).toBe(date);
  });

  it.each(["drop", "drop-mid-upload"] as const)("cuts the connection for %s without creating or charging anything", async (fault) => {
    const h = await harness();
    h.sandbox.scriptFaults([{ route: "submit", fault }]);
    expect((await rawSubmit(h)).error).toBeInstanceOf(Error);
    await expectNothingCharged(h);
    expect((await state(h)).stats.slots_in_flight).toBe(0);
  });

  it("creates exactly one task for drop-after-commit, which a retry with the same key gets back", async () => {
    const h = await harness();
    h.sandbox.scriptFaults([{ route: "submit", fault: "drop-after-commit" }]);
    expect((await rawSubmit(h, "retry-me")).error).toBeInstanceOf(Error);
    const committed = await state(h);
    expect(committed.tasks).toHaveLength(1);
    expect(committed.reserved_micros).toBe(500_000);
    const retry = await rawSubmit(h, "retry-me");
    expect(retry.headers?.["idempotent-replayed"]).toBe("true");
    expect(JSON.parse(retry.text!).data.id).toBe(committed.tasks[0]!.id);
    expect((await state(h)).reserved_micros).toBe(500_000);
  });

  it("creates exactly one task for malformed-after-commit, answers it with a created_at that is no timestamp, and a retry with the same key gets it back sound", async () => {
    const h = await harness();
    h.sandbox.scriptFaults([{ route: "submit", fault: "malformed-after-commit" }]);
    const malformed = await rawSubmit(h, "retry-me");
    const committed = await state(h);
    expect(committed.tasks).toHaveLength(1);
    expect(committed.reserved_micros).toBe(500_000);
    expect(JSON.parse(malformed.text!).data).toMatchObject({
      id: committed.tasks[0]!.id,
      status: "processing",
      created_at: "yesterday at noon",
    });
    const retry = await rawSubmit(h, "retry-me");
    expect(retry.headers?.["idempotent-replayed"]).toBe("true");
    expect(JSON.parse(retry.text!).data).toMatchObject({
      id: committed.tasks[0]!.id,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect((await state(h)).reserved_micros).toBe(500_000);
  });

  it("sends half of the result file for drop-mid-download, then a retry gets the whole file", async () => {
    const h = await harness();
    const task = await finish(h, (await submit(h, INPUT)).body.data.id);
    h.sandbox.scriptFaults([{ route: "result", fault: "drop-mid-download" }]);
    const response = await request(task.result_url!, { dispatcher: h.agent });
    expect(response.statusCode).toBe(200);
    await expect(response.body.arrayBuffer()).rejects.toThrow();
    const whole = await download(h, task.result_url!);
    expect(whole.body.length).toBe(Number(response.headers["content-length"]));
  });

  it("sends the result file for endless-download, then blank lines for as long as the client reads, and leaves chaos alone unless named", async () => {
    const h = await harness();
    const task = await finish(h, (await submit(h, INPUT)).body.data.id);
    const whole = (await download(h, task.result_url!)).body;
    h.sandbox.scriptFaults([{ route: "result", fault: "endless-download" }]);
    const response = await request(task.result_url!, { dispatcher: h.agent });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-length"]).toBeUndefined();
    const read: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      read.push(chunk);
      bytes += chunk.length;
      if (bytes > whole.length + 1024 * 1024) break;
    }
    const body = Buffer.concat(read);
    expect(body.subarray(0, whole.length).equals(whole)).toBe(true);
    expect(body.subarray(whole.length).every((byte) => byte === 0x0a)).toBe(true);
    expect(CHAOS_FAULT_KINDS).not.toContain("endless-download");
    expect(CHAOS_FAULT_KINDS).toEqual(FAULT_KINDS.filter((kind) => kind !== "endless-download"));
  });

  it("answers html with a 502 HTML page", async () => {
    const h = await harness();
    h.sandbox.scriptFaults([{ route: "balance", fault: "html" }]);
    const response = await request(`${h.sandbox.url}/api/v1/balance`, { headers: { "x-api-key": h.sandbox.apiKey }, dispatcher: h.agent });
    expect(response.statusCode).toBe(502);
    expect(response.headers["content-type"]).toBe("text/html");
    expect(await response.body.text()).toContain("502 Bad Gateway");
  });

  it("answers truncated-json with JSON that stops halfway, and no-code-envelope with JSON lacking code", async () => {
    const h = await harness();
    h.sandbox.scriptFaults([
      { route: "submit", fault: "truncated-json" },
      { route: "submit", fault: "no-code-envelope" },
    ]);
    const truncated = await rawSubmit(h);
    expect(truncated.status).toBe(200);
    expect(() => JSON.parse(truncated.text!)).toThrow();
    const noCode = await rawSubmit(h);
    expect(JSON.parse(noCode.text!)).not.toHaveProperty("code");
    await expectNothingCharged(h);
  });

  it("delays a slow response, then serves it normally", async () => {
    const h = await harness();
    h.sandbox.scriptFaults([{ route: "check", fault: "slow", delayMs: 20 }]);
    const id = (await submit(h, INPUT)).body.data.id;
    expect((await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data.id).toBe(id);
    expect(h.logs.at(-1)).toMatch(/code=0 \d+ms fault=slow/);
  });

  it("keeps an any-route fault for the first request where it can happen, repeating it `times` times", async () => {
    const h = await harness();
    h.sandbox.scriptFaults([{ route: "any", fault: "drop-after-commit", times: 2 }]);
    expect((await apiGet(h, "/api/v1/balance")).body.code).toBe(0);
    expect((await rawSubmit(h)).error).toBeInstanceOf(Error);
    expect((await rawSubmit(h)).error).toBeInstanceOf(Error);
    expect((await rawSubmit(h)).status).toBe(200);
    const s = await state(h);
    expect(s.tasks).toHaveLength(3);
    expect(s.stats.faults_injected).toEqual({ "drop-after-commit": 2 });
  });

  it("queues faults posted to /_sandbox/faults and rejects invalid lists", async () => {
    const h = await harness();
    const post = async (body: string) => {
      const response = await request(`${h.sandbox.url}/_sandbox/faults`, {
        method: "POST",
        headers: { "x-api-key": h.sandbox.apiKey, "content-type": "application/json" },
        body,
        dispatcher: h.agent,
      });
      return (await response.body.json()) as { code: number; data: unknown };
    };
    expect(await post("not json")).toMatchObject({ code: 40001 });
    expect(await post(JSON.stringify([{ route: "balance", fault: "drop-mid-download" }]))).toMatchObject({ code: 40000 });
    expect(await post(JSON.stringify([{ route: "balance", fault: "50303", times: 2 }]))).toEqual({
      code: 0,
      msg: "success",
      data: { queued: 1, pending: 2 },
    });
    expect((await apiGet(h, "/api/v1/balance")).body.code).toBe(50303);
    expect((await apiGet(h, "/api/v1/balance")).body.code).toBe(50303);
    expect((await apiGet(h, "/api/v1/balance")).body.code).toBe(0);
  });

  it("throws on an invalid scripted fault passed to scriptFaults()", async () => {
    const h = await harness();
    expect(() => h.sandbox.scriptFaults([{ route: "check", fault: "nope" as FaultKind }])).toThrow(/fault must be one of/);
  });
});

describe("chaos", () => {
  async function outcomes(seed: number): Promise<string[]> {
    const h = await harness({ seed, chaos: 0.5, chaosFaults: [...FAULT_KINDS].filter((kind) => kind !== "slow") });
    const seen: string[] = [];
    for (let i = 0; i < 40; i++) {
      try {
        const response = await request(`${h.sandbox.url}/api/v1/balance`, {
          headers: { "x-api-key": h.sandbox.apiKey },
          dispatcher: h.agent,
        });
        seen.push(`${response.statusCode}:${(await response.body.text()).slice(0, 12)}`);
      } catch {
        seen.push("dropped");
      }
    }
    const injected = (await state(h)).stats.faults_injected;
    expect(
      Object.keys(injected).every(
        (kind) => !["drop-mid-upload", "drop-after-commit", "drop-mid-download", "endless-download"].includes(kind),
      ),
    ).toBe(true);
    return seen;
  }

  it("injects the same faults into the same request sequence for the same seed", async () => {
    const first = await outcomes(11);
    expect(await outcomes(11)).toEqual(first);
    expect(await outcomes(12)).not.toEqual(first);
    expect(first.filter((outcome) => outcome.startsWith('200:{"code":0')).length).toBeGreaterThan(5);
    expect(first.filter((outcome) => !outcome.startsWith('200:{"code":0')).length).toBeGreaterThan(5);
  });

  it("never faults the admin endpoints", async () => {
    const h = await harness({ chaos: 1 });
    for (let i = 0; i < 10; i++) expect((await apiGet(h, "/_sandbox/state")).body.code).toBe(0);
  });
});

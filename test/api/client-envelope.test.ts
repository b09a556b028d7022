import { afterEach, describe, expect, it } from "vitest";
import { createClient, type ApiClient, type ClientEvent, type ClientOptions } from "../../src/api/index.js";
import { ApiError, ResponseFormatError } from "../../src/api/errors.js";
import { BulkcheckError, ProtocolError, UsageError } from "../../src/errors.js";
import {
  API_KEY,
  FULL_TASK,
  SHORT_FINISHED_TASK,
  fakeTime,
  sendEnvelope,
  sendRaw,
  startServer,
  type Handler,
  type ScriptedServer,
} from "./scripted-server.js";

let server: ScriptedServer | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function setup(
  handler: Handler,
  options: Partial<ClientOptions> = {},
): Promise<{ client: ApiClient; server: ScriptedServer; events: ClientEvent[] }> {
  server = await startServer(handler);
  const events: ClientEvent[] = [];
  const time = fakeTime();
  client = createClient({
    baseUrl: server.origin,
    apiKey: API_KEY,
    now: time.now,
    sleep: time.sleep,
    random: () => 0,
    onEvent: (event) => events.push(event),
    ...options,
  });
  return { client, server, events };
}

async function failure(promise: Promise<unknown>): Promise<BulkcheckError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof BulkcheckError)) throw new Error(`expected a BulkcheckError, got ${String(error)}`);
  return error;
}

describe("envelope unwrapping", () => {
  it("returns the task of the fuller variant and ignores unknown fields", async () => {
    const { client } = await setup((req, res) =>
      sendEnvelope(req, res, {
        code: 0,
        msg: "success",
        data: { ...FULL_TASK, eta_seconds: 12, extra: { nested: true } },
        trace_id: "abc",
      }),
    );
    const task = await client.checkTask(FULL_TASK.id);
    expect(task).toEqual(FULL_TASK);
    expect(task).not.toHaveProperty("eta_seconds");
  });

  it("accepts the shorter task variant with counts and a result URL", async () => {
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: SHORT_FINISHED_TASK }));
    expect(await client.checkTask(SHORT_FINISHED_TASK.id)).toEqual(SHORT_FINISHED_TASK);
  });

  it.each(["2030-01-01T12:00:00Z", "2030-01-01T12:00:00.123+02:00", "2030-01-01T12:00Z", ""])(
    "accepts the created_at %j",
    async (createdAt) => {
      const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: { ...FULL_TASK, created_at: createdAt } }));
      expect((await client.checkTask(FULL_TASK.id)).created_at).toBe(createdAt);
    },
  );

  it("treats a null result_url as briefly absent", async () => {
    const { client } = await setup((req, res) =>
      sendEnvelope(req, res, { code: 0, data: { ...SHORT_FINISHED_TASK, result_url: null, invalid_cnt: null } }),
    );
    const task = await client.checkTask(SHORT_FINISHED_TASK.id);
    expect(task.result_url).toBeUndefined();
    expect(task).not.toHaveProperty("invalid_cnt");
  });

  it("reads the balance in micros", async () => {
    const { client, server } = await setup((req, res) =>
      sendEnvelope(req, res, { code: 0, data: { balance_micros: 12_345_678, currency: "USD" } }),
    );
    expect(await client.getBalance()).toEqual({ balance_micros: 12_345_678 });
    expect(server.hits[0]).toMatchObject({ method: "GET", url: "/api/v1/balance" });
    expect(server.hits[0]?.headers["x-api-key"]).toBe(API_KEY);
  });

  it("puts the task id into the path URL-encoded", async () => {
    const { client, server } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: FULL_TASK }));
    await client.checkTask("a/b c?d");
    expect(server.hits[0]?.url).toBe("/api/v1/bulk-tasks/a%2Fb%20c%3Fd");
  });

  it("rejects an empty task id without sending anything", async () => {
    const { client, server } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: FULL_TASK }));
    await expect(client.checkTask("")).rejects.toBeInstanceOf(UsageError);
    await expect(client.checkTask("  ")).rejects.toBeInstanceOf(UsageError);
    expect(server.hits).toHaveLength(0);
  });

  it("keeps a path prefix of the base URL and drops a pasted /api/v1", async () => {
    const { server } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: { balance_micros: 1 } }));
    const prefixed = createClient({ baseUrl: `${server.origin}/gateway/api/v1/?ignored=1`, apiKey: API_KEY });
    await prefixed.getBalance();
    await prefixed.close();
    expect(server.hits[0]?.url).toBe("/gateway/api/v1/balance");
  });

  it("reports each request as an event with path, status, code and attempt", async () => {
    const { client, events } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: FULL_TASK }));
    await client.checkTask(FULL_TASK.id);
    expect(events).toEqual([
      { type: "request", method: "GET", path: `/api/v1/bulk-tasks/${FULL_TASK.id}`, status: 200, code: 0, ms: 0, attempt: 1 },
    ]);
  });
});

describe("error envelopes", () => {
  it.each([
    [40000, "input", 400],
    [40001, "input", 400],
    [40002, "input", 400],
    [42200, "input", 422],
    [40100, "auth", 401],
    [40200, "balance", 402],
    [42900, "unavailable", 429],
    [42901, "unavailable", 429],
    [50300, "unavailable", 503],
    [50303, "unavailable", 503],
    [50400, "unavailable", 504],
    [49999, "unexpected", 400],
  ])("turns code %i into an ApiError of kind %s", async (code, kind, status) => {
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code, msg: "nope", data: null }, status), {
      retry: { maxAttempts: 1 },
    });
    const error = await failure(client.getBalance());
    expect(error).toBeInstanceOf(ApiError);
    expect(error.kind).toBe(kind);
    expect(error).toMatchObject({ apiCode: code, status, serviceMessage: "nope", code: "ERR_BULKCHECK_API" });
    expect(error.message).toContain(String(code));
    expect(error.message).toContain('The service said: "nope"');
  });

  it("says what to do about a rejected key, without the key", async () => {
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 40100, msg: `invalid key ${API_KEY}` }, 401));
    const error = await failure(client.getBalance());
    expect(error.kind).toBe("auth");
    // What to do depends on where the key came from, which the CLI knows and adds as the hint (it was always config set api-key).
    expect(error.message).toMatch(/^The service rejected the API key \(40100\)\./);
    expect(error.message).not.toContain("config set api-key");
    expect(error.message).not.toContain(API_KEY);
  });

  it("keys off the envelope code even when the HTTP status is 200", async () => {
    const { client, events } = await setup((req, res) => sendEnvelope(req, res, { code: 40200, msg: "insufficient balance" }, 200));
    const error = await failure(client.checkTask("abc"));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.kind).toBe("balance");
    expect(events[0]).toMatchObject({ status: 200, code: 40200 });
  });

  it("reads a success envelope even when the HTTP status says error", async () => {
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: { balance_micros: 5 } }, 500));
    expect(await client.getBalance()).toEqual({ balance_micros: 5 });
  });

  it("carries the Retry-After of an error in milliseconds", async () => {
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 42901 }, 429, { "retry-after": "12" }), {
      retry: { maxAttempts: 1 },
    });
    expect(await failure(client.getBalance())).toMatchObject({ apiCode: 42901, retryAfterMs: 12_000 });
  });
});

describe("responses that are not envelopes", () => {
  it.each([
    [
      "an HTML page",
      200,
      "text/html; charset=utf-8",
      "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body>" + "x".repeat(200),
      /HTTP 200 with text\/html: "<!DOCTYPE html> <html><head><title>Welcome to nginx!/,
    ],
    [
      "truncated JSON",
      200,
      "application/json",
      '{"code":0,"msg":"success","data":{"id":"ab',
      /HTTP 200 with application\/json: "\{"code":0,"msg":"success","data":\{"id":"ab"/,
    ],
    ["JSON without a numeric code", 200, "application/json", '{"code":"0","data":{}}', /HTTP 200 with application\/json/],
    ["JSON that is not an object", 200, "application/json", "[1,2,3]", /HTTP 200/],
    ["garbage with no content type", 200, undefined, "\u0000\u0001garbage\r\nmore", /with no content type: "garbage more"/],
    ["an empty 404", 404, "text/plain", "", /HTTP 404 with text\/plain and an empty body/],
  ])("turns %s into a ProtocolError that says what arrived", async (_name, status, type, body, pattern) => {
    const { client, server } = await setup((req, res) => sendRaw(req, res, status, type, body));
    const error = await failure(client.getBalance());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error.kind).toBe("unexpected");
    expect(error.message).toMatch(pattern);
    expect(error.message).toContain("Check that --base-url points at the bulk-checking service");
    expect(error.message.length).toBeLessThan(400);
    expect(server.hits).toHaveLength(1);
  });

  it("turns a success envelope holding a malformed task into a ProtocolError", async () => {
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: { ...FULL_TASK, status: "queued" } }));
    const error = await failure(client.checkTask(FULL_TASK.id));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain('status "queued"');
  });

  it.each([
    ["no data", undefined],
    ["a task without an id", { ...FULL_TASK, id: "" }],
    ["a string count", { ...FULL_TASK, total: "1000" }],
    ["a created_at that is no timestamp", { ...FULL_TASK, created_at: "2030\u001b[2J" }],
    ["a created_at that is no date", { ...FULL_TASK, created_at: "2030-13-45T99:00:00Z" }],
  ])("rejects a success envelope with %s", async (_name, data) => {
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data }));
    await expect(client.checkTask("x")).rejects.toBeInstanceOf(ProtocolError);
  });

  it.each([
    ["terminal escapes and a semicolon", "3f2a\u001b[31m;rm -rf ~"],
    ["a slash", "../balance"],
    ["129 characters", "a".repeat(129)],
  ])("refuses a task id with %s (exit 1), without echoing it as sent", async (_name, id) => {
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: { ...FULL_TASK, id } }));
    const error = await failure(client.checkTask(FULL_TASK.id));
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error.kind).toBe("unexpected");
    expect(error.message).toContain("the service returned a malformed task id");
    expect(error.message).not.toContain("\u001b");
  });

  it("accepts any task id of 1 to 128 letters, digits, underscores and hyphens", async () => {
    const id = `Task_${"x-".repeat(61)}9`;
    const { client } = await setup((req, res) => sendEnvelope(req, res, { code: 0, data: { ...FULL_TASK, id } }));
    expect((await client.checkTask(FULL_TASK.id)).id).toBe(id);
  });

  it("does not read an endless body into memory", async () => {
    const { client } = await setup((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/html" });
      const chunk = "<p>" + "y".repeat(64 * 1024) + "</p>";
      let sent = 0;
      const pump = (): void => {
        while (sent < 64) {
          sent++;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
    const error = await failure(client.getBalance());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain("too large to be an envelope");
  });
});

describe("the API key", () => {
  it("never appears in events or error messages, even when the server echoes it", async () => {
    const echo = `key=${API_KEY}`;
    const { client, events } = await setup(
      (req, res, n) => {
        if (n === 1) return sendEnvelope(req, res, { code: 40100, msg: `unknown ${echo}` }, 401);
        if (n === 2) return sendRaw(req, res, 200, "text/html", `<p>${echo}</p>`);
        if (n === 3) return sendRaw(req, res, 502, "text/html", `<p>${echo}</p>`);
        return sendEnvelope(req, res, { code: 0, data: { ...FULL_TASK, status: echo } });
      },
      { retry: { maxAttempts: 1 } },
    );
    const errors = [
      await failure(client.getBalance()),
      await failure(client.getBalance()),
      await failure(client.getBalance()),
      await failure(client.checkTask("x")),
    ];
    expect(errors.map((e) => e.constructor.name)).toEqual(["ApiError", "ResponseFormatError", "HttpStatusError", "RefusedTaskError"]);
    // A task with a sound id and a refused field names that task: an upload's caller keeps it.
    expect(errors[3]).toMatchObject({ taskId: FULL_TASK.id });
    for (const error of errors) {
      expect(error.message).not.toContain(API_KEY);
      expect(error.message).toContain("[redacted]");
    }
    expect(events).toHaveLength(4);
    expect(JSON.stringify(events)).not.toContain(API_KEY);
  });

  it("refuses a key that cannot travel in a header, without echoing it", () => {
    expect(() => createClient({ baseUrl: "http://127.0.0.1:1", apiKey: "sk live\nsecret" })).toThrow(UsageError);
    try {
      createClient({ baseUrl: "http://127.0.0.1:1", apiKey: "sk live\nsecret" });
    } catch (error) {
      expect((error as Error).message).not.toContain("secret");
    }
  });

  it.each(["ftp://example.com", "not a url", "https://user:pw@api.example.com"])("refuses the base URL %s", (baseUrl) => {
    expect(() => createClient({ baseUrl, apiKey: API_KEY })).toThrow(UsageError);
  });
});

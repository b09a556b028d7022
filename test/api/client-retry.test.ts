import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createClient, type ApiClient, type ClientEvent, type ClientOptions } from "../../src/api/index.js";
import { ApiError, ConnectionError, HttpStatusError, RetriesExhaustedError } from "../../src/api/errors.js";
import { BulkcheckError, InterruptedError, ProtocolError, ServiceUnavailableError } from "../../src/errors.js";
import { readMultipart } from "./multipart-reader.js";
import {
  API_KEY,
  FULL_TASK,
  dropConnection,
  fakeTime,
  freePort,
  sendEnvelope,
  sendRaw,
  startServer,
  type Handler,
  type ScriptedServer,
} from "./scripted-server.js";

let dir: string;
let listFile: string;
const LIST = "14155550100\n14155550101\n14155550102\n";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bulkcheck-api-retry-"));
  listFile = join(dir, "numbers.txt");
  await writeFile(listFile, LIST);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const servers: ScriptedServer[] = [];
const clients: ApiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

interface Setup {
  client: ApiClient;
  server: ScriptedServer;
  events: ClientEvent[];
  delays: number[];
}

async function setup(handler: Handler, options: Partial<ClientOptions> = {}): Promise<Setup> {
  const server = await startServer(handler);
  servers.push(server);
  const time = fakeTime();
  const events: ClientEvent[] = [];
  const client = createClient({
    baseUrl: server.origin,
    apiKey: API_KEY,
    now: time.now,
    sleep: time.sleep,
    random: () => 0,
    onEvent: (event) => events.push(event),
    ...options,
  });
  clients.push(client);
  return { client, server, events, delays: time.delays };
}

async function rejection(promise: Promise<unknown>): Promise<BulkcheckError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof BulkcheckError)) throw new Error(`expected a BulkcheckError, got ${String(error)}`);
  return error;
}

const ok: Handler = (req, res) => sendEnvelope(req, res, { code: 0, data: FULL_TASK });

describe("Retry-After", () => {
  it("retries 42901 after the Retry-After delay given in seconds", async () => {
    const { client, server, delays, events } = await setup((req, res, n) =>
      n === 1 ? sendEnvelope(req, res, { code: 42901, msg: "busy" }, 429, { "retry-after": "7" }) : ok(req, res, n),
    );
    expect(await client.checkTask(FULL_TASK.id)).toEqual(FULL_TASK);
    expect(delays).toEqual([7_000]);
    expect(server.hits).toHaveLength(2);
    expect(events.filter((e) => e.type === "retry")).toEqual([
      {
        type: "retry",
        attempt: 2,
        maxAttempts: 8,
        delayMs: 7_000,
        reason: "42901 all request slots are occupied",
        summary: "all request slots are occupied (42901)",
        askedMs: 7_000,
      },
    ]);
    expect(events.filter((e) => e.type === "request").map((e) => e.type === "request" && [e.attempt, e.code])).toEqual([
      [1, 42901],
      [2, 0],
    ]);
  });

  it("retries 50303 after the Retry-After delay given as an HTTP date", async () => {
    const time = fakeTime();
    const at = new Date(time.now() + 9_000).toUTCString();
    const { client, delays } = await setup(
      (req, res, n) => (n === 1 ? sendEnvelope(req, res, { code: 50303 }, 503, { "retry-after": at }) : ok(req, res, n)),
      { now: time.now, sleep: time.sleep },
    );
    await client.checkTask(FULL_TASK.id);
    expect(time.delays).toEqual([9_000]);
    expect(delays).toEqual([]);
  });

  it("backs off exponentially when 42901 comes without Retry-After", async () => {
    const { client, delays } = await setup((req, res, n) => (n <= 3 ? sendEnvelope(req, res, { code: 42901 }, 429) : ok(req, res, n)));
    await client.checkTask(FULL_TASK.id);
    expect(delays).toEqual([1_000, 2_000, 4_000]);
  });

  it("caps a long Retry-After at maxRetryAfterMs", async () => {
    const { client, delays } = await setup(
      (req, res, n) => (n === 1 ? sendEnvelope(req, res, { code: 50303 }, 503, { "retry-after": "3600" }) : ok(req, res, n)),
      { retry: { maxRetryAfterMs: 60_000 } },
    );
    await client.checkTask(FULL_TASK.id);
    expect(delays).toEqual([60_000]);
  });

  it("adds jitter that only lengthens the wait", async () => {
    const { client, delays } = await setup(
      (req, res, n) => (n === 1 ? sendEnvelope(req, res, { code: 42901 }, 429, { "retry-after": "10" }) : ok(req, res, n)),
      { random: () => 0.5 },
    );
    await client.checkTask(FULL_TASK.id);
    expect(delays).toEqual([11_000]);
  });

  it("retries 50400 with exponential backoff", async () => {
    const { client, delays } = await setup((req, res, n) => (n <= 2 ? sendEnvelope(req, res, { code: 50400 }, 504) : ok(req, res, n)));
    await client.checkTask(FULL_TASK.id);
    expect(delays).toEqual([1_000, 2_000]);
  });
});

describe("POST and idempotency", () => {
  it("retries a submission with the same Idempotency-Key and the whole file on every attempt", async () => {
    const received: string[] = [];
    const { client, server, delays } = await setup(async (req, res, n) => {
      const parts = await readMultipart(req);
      const file = parts.find((p) => p.kind === "file");
      received.push(file?.kind === "file" ? file.head : "none");
      if (n === 1) return sendEnvelope(req, res, { code: 42901 }, 429, { "retry-after": "3" });
      if (n === 2) return sendEnvelope(req, res, { code: 50400 }, 504);
      if (n === 3) return dropConnection(req);
      sendEnvelope(req, res, { code: 0, data: FULL_TASK }, 200, { "idempotent-replayed": "true" });
    });
    const result = await client.submitTask({
      serviceType: "number_validation_batch",
      country: "US",
      file: listFile,
      idempotencyKey: "job-42",
    });
    expect(result).toEqual({ task: FULL_TASK, replayed: true });
    expect(server.hits.map((h) => h.headers["idempotency-key"])).toEqual(["job-42", "job-42", "job-42", "job-42"]);
    expect(received).toEqual([LIST, LIST, LIST, LIST]);
    expect(delays).toEqual([3_000, 2_000, 4_000]);
  });

  it("reports replayed false when the service does not say it replayed", async () => {
    const { client } = await setup(ok);
    const result = await client.submitTask({ serviceType: "number_validation_batch", file: listFile, idempotencyKey: "k" });
    expect(result.replayed).toBe(false);
  });

  it("does not resend a POST without key after the connection breaks mid-request", async () => {
    const { client, server, delays } = await setup((req) => {
      req.once("data", () => dropConnection(req));
    });
    const error = await rejection(client.submitTask({ serviceType: "number_validation_batch", country: "US", file: listFile }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ sent: true, kind: "unavailable" });
    expect(error.message).toContain("may have reached the service");
    expect(server.hits).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("does not resend a POST without key after 42901, since the request did arrive", async () => {
    const { client, server } = await setup((req, res) => sendEnvelope(req, res, { code: 42901 }, 429, { "retry-after": "1" }));
    const error = await rejection(client.submitTask({ serviceType: "number_validation_batch", file: listFile }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ apiCode: 42901 });
    expect(server.hits).toHaveLength(1);
  });

  it("does not wait for a service on this machine that refuses the connection: nothing is running there", async () => {
    const port = await freePort();
    const time = fakeTime();
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      now: time.now,
      sleep: time.sleep,
      random: () => 0,
    });
    clients.push(client);
    const error = await rejection(client.submitTask({ serviceType: "number_validation_batch", file: listFile }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toBe(`Nothing is listening at http://127.0.0.1:${port} (ECONNREFUSED).`);
    expect(error.hint).toContain(`bulkcheck sandbox --port ${port}`);
    expect(time.delays).toEqual([]);
  });

  it("rejects an idempotency key longer than 128 characters before sending", async () => {
    const { client, server } = await setup(ok);
    await expect(
      client.submitTask({ serviceType: "number_validation_batch", file: listFile, idempotencyKey: "k".repeat(129) }),
    ).rejects.toThrow(/1 to 128 visible ASCII characters/);
    expect(server.hits).toHaveLength(0);
  });
});

describe("connection failures on GET", () => {
  it("retries a GET after the connection is reset", async () => {
    const { client, server, delays, events } = await setup((req, res, n) => (n === 1 ? dropConnection(req) : ok(req, res, n)));
    expect(await client.checkTask(FULL_TASK.id)).toEqual(FULL_TASK);
    expect(server.hits).toHaveLength(2);
    expect(delays).toEqual([1_000]);
    expect(events[0]).toMatchObject({
      type: "request",
      attempt: 1,
      status: undefined,
      error: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/),
    });
    expect(events[1]).toMatchObject({
      type: "retry",
      attempt: 2,
      delayMs: 1_000,
      reason: expect.stringMatching(/^connection (closed|reset)/),
    });
  });

  it("retries a GET whose response headers do not arrive in time", async () => {
    const { client, server } = await setup(
      (req, res, n) => {
        if (n > 1) void ok(req, res, n); // the first request is left unanswered
      },
      { timeouts: { headersMs: 100 } },
    );
    expect(await client.getBalance().catch((e: unknown) => e)).toBeInstanceOf(ProtocolError); // FULL_TASK is not a balance
    expect(server.hits).toHaveLength(2);
  });

  it("retries a GET whose answer drips in slower than the body deadline, though no silence between bytes is that long", async () => {
    const drip: Handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const timer = setInterval(() => res.write(" "), 20);
      res.once("close", () => clearInterval(timer));
    };
    const { client, server, events } = await setup((req, res, n) => (n === 1 ? drip(req, res, n) : ok(req, res, n)), {
      timeouts: { bodyMs: 300 },
    });
    expect(await client.checkTask(FULL_TASK.id)).toEqual(FULL_TASK);
    expect(server.hits).toHaveLength(2);
    expect(events.find((e) => e.type === "retry")).toMatchObject({ summary: "no answer in time (ERR_BULKCHECK_BODY_DEADLINE)" });
  });

  it("retries a gateway's 502 page on a GET", async () => {
    const { client, delays } = await setup((req, res, n) =>
      n === 1 ? sendRaw(req, res, 502, "text/html", "<h1>Bad Gateway</h1>") : ok(req, res, n),
    );
    await client.checkTask(FULL_TASK.id);
    expect(delays).toEqual([1_000]);
  });
});

describe("giving up", () => {
  it("stops after maxAttempts and says how many attempts over how long", async () => {
    const { client, server, delays } = await setup((req, res) => sendEnvelope(req, res, { code: 50400, msg: "upstream timeout" }, 504));
    const error = await rejection(client.checkTask(FULL_TASK.id));
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error.kind).toBe("unavailable");
    expect(server.hits).toHaveLength(8);
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000]);
    const exhausted = error as RetriesExhaustedError;
    expect(exhausted).toMatchObject({ attempts: 8, elapsedMs: 123_000, apiCode: 50400, status: 504 });
    expect(exhausted.cause).toBeInstanceOf(ApiError);
    expect(error.message).toMatch(
      /^GET \/api\/v1\/bulk-tasks\/\w+ failed after 8 attempts over 2 min 3 s; stopped at the limit of 8 attempts\./,
    );
    expect(error.message).toContain("Last failure: The request did not finish within the service's timeout (50400)");
  });

  it("honours a smaller maxAttempts", async () => {
    const { client, server } = await setup((req, res) => sendEnvelope(req, res, { code: 42901 }, 429), { retry: { maxAttempts: 3 } });
    const error = await rejection(client.getBalance());
    expect(error).toMatchObject({ attempts: 3, apiCode: 42901 });
    expect(server.hits).toHaveLength(3);
  });

  it("stops before a wait that would pass the overall deadline", async () => {
    const { client, server, delays } = await setup((req, res) => sendEnvelope(req, res, { code: 42901 }, 429, { "retry-after": "300" }), {
      retry: { deadlineMs: 600_000 },
    });
    const error = await rejection(client.getBalance());
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect(delays).toEqual([300_000, 300_000]);
    expect(server.hits).toHaveLength(3);
    expect(error.message).toContain("failed after 3 attempts over 10 min; stopped at the next wait (5 min) would pass the 10 min deadline");
  });

  it("gives up on a GET whose connection keeps failing, keeping the connection error as the cause", async () => {
    const { client, server } = await setup(dropConnection, { retry: { maxAttempts: 2 } });
    const error = await rejection(client.getBalance());
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect(error.cause).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain("closed before a complete response arrived");
    expect(server.hits).toHaveLength(2);
  });

  it.each([40000, 40001, 40002, 40100, 40200, 42200, 42900, 50300])("never retries %i, on GET or on a keyed POST", async (code) => {
    const { client, server, delays } = await setup((req, res) => sendEnvelope(req, res, { code }, 400, { "retry-after": "1" }));
    await expect(client.checkTask(FULL_TASK.id)).rejects.toMatchObject({ apiCode: code });
    await expect(client.submitTask({ serviceType: "number_validation_batch", file: listFile, idempotencyKey: "k1" })).rejects.toMatchObject(
      {
        apiCode: code,
      },
    );
    expect(server.hits).toHaveLength(2);
    expect(delays).toEqual([]);
  });

  it("never retries a ProtocolError", async () => {
    const { client, server } = await setup((req, res) => sendRaw(req, res, 200, "text/html", "<html></html>"));
    await expect(client.getBalance()).rejects.toBeInstanceOf(ProtocolError);
    expect(server.hits).toHaveLength(1);
  });

  it("throws the failure itself when retries are disabled", async () => {
    const { client } = await setup((req, res) => sendRaw(req, res, 503, "text/html", "down"), { retry: { maxAttempts: 1 } });
    await expect(client.getBalance()).rejects.toBeInstanceOf(HttpStatusError);
  });
});

describe("interruption", () => {
  it("rejects at once, sending nothing, when the signal has already fired", async () => {
    const controller = new AbortController();
    controller.abort();
    const { client, server } = await setup(ok, { signal: controller.signal });
    await expect(client.checkTask(FULL_TASK.id)).rejects.toBeInstanceOf(InterruptedError);
    expect(server.hits).toHaveLength(0);
  });

  it("aborts a request in flight when the signal fires", async () => {
    const controller = new AbortController();
    const { client } = await setup(() => controller.abort(), { signal: controller.signal });
    await expect(client.getBalance()).rejects.toBeInstanceOf(InterruptedError);
  });

  it("aborts a retry wait when the signal fires", async () => {
    const controller = new AbortController();
    const { client, server } = await setup((req, res) => sendEnvelope(req, res, { code: 42901 }, 429, { "retry-after": "30" }), {
      signal: controller.signal,
      sleep: async (_ms, signal) => {
        controller.abort();
        if (signal?.aborted) throw signal.reason;
      },
    });
    await expect(client.getBalance()).rejects.toBeInstanceOf(InterruptedError);
    expect(server.hits).toHaveLength(1);
  });

  it("aborts the default sleep", async () => {
    const controller = new AbortController();
    const { client } = await setup(
      (req, res) => {
        sendEnvelope(req, res, { code: 42901 }, 429, { "retry-after": "60" });
        res.once("finish", () => setImmediate(() => controller.abort()));
      },
      { signal: controller.signal, sleep: undefined, now: Date.now },
    );
    await expect(client.getBalance()).rejects.toBeInstanceOf(InterruptedError);
  });
});

describe("events", () => {
  it("ignores an onEvent callback that throws", async () => {
    const { client } = await setup(ok, {
      onEvent: () => {
        throw new Error("logger broke");
      },
    });
    await expect(client.checkTask(FULL_TASK.id)).resolves.toEqual(FULL_TASK);
  });
});

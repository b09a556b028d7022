import { text } from "node:stream/consumers";
import { afterEach, describe, expect, it } from "vitest";
import { createClient, type ApiClient, type ClientEvent } from "../../src/api/index.js";
import { ApiError, HttpStatusError, ResultUrlExpiredError } from "../../src/api/errors.js";
import { BulkcheckError, UsageError } from "../../src/errors.js";
import { API_KEY, dropConnection, fakeTime, sendEnvelope, startServer, type Handler, type ScriptedServer } from "./scripted-server.js";

const SECRET = "sig=S3CR3T-token&exp=1893456000";
const CSV = "identifier,activated\n14155550100,true\n14155550101,false\n";

const servers: ScriptedServer[] = [];
const clients: ApiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(handler: Handler): Promise<ScriptedServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

function clientFor(service: ScriptedServer, events: ClientEvent[] = [], delays: number[] = []): ApiClient {
  const time = fakeTime();
  const client = createClient({
    baseUrl: service.origin,
    apiKey: API_KEY,
    now: time.now,
    random: () => 0,
    sleep: async (ms) => {
      delays.push(ms);
      await time.sleep(ms);
    },
    onEvent: (event) => events.push(event),
  });
  clients.push(client);
  return client;
}

const csv: Handler = (req, res) => {
  res.writeHead(200, { "content-type": "text/csv", "content-length": String(Buffer.byteLength(CSV)) });
  res.end(CSV);
};

const redirectTo =
  (location: string, status = 302): Handler =>
  (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };

function secretFree(events: ClientEvent[], error?: unknown): void {
  expect(JSON.stringify(events)).not.toContain("S3CR3T");
  expect(JSON.stringify(events)).not.toContain(API_KEY);
  if (error instanceof Error) {
    expect(error.message).not.toContain("S3CR3T");
    expect(error.message).not.toContain(API_KEY);
  }
}

describe("openResult", () => {
  it("streams the file from the service's own origin, sending the key", async () => {
    const service = await server(csv);
    const events: ClientEvent[] = [];
    const result = await clientFor(service, events).openResult(`${service.origin}/results/t1.csv?${SECRET}`);
    expect(result.contentType).toBe("text/csv");
    expect(result.contentLength).toBe(Buffer.byteLength(CSV));
    expect(await text(result.body)).toBe(CSV);
    expect(service.hits[0]?.url).toBe(`/results/t1.csv?${SECRET}`);
    expect(service.hits[0]?.headers["x-api-key"]).toBe(API_KEY);
    expect(events).toEqual([
      { type: "request", method: "GET", path: `${service.origin}/results/t1.csv`, status: 200, code: undefined, ms: 0, attempt: 1 },
    ]);
  });

  it("does not send the key to a result URL on another origin", async () => {
    const service = await server(csv);
    const storage = await server(csv);
    const result = await clientFor(service).openResult(`${storage.origin}/r/t1.csv?${SECRET}`);
    expect(await text(result.body)).toBe(CSV);
    expect(storage.hits[0]?.headers["x-api-key"]).toBeUndefined();
    expect(service.hits).toHaveLength(0);
  });

  it("drops the key when a redirect leaves the service's origin", async () => {
    const storage = await server(csv);
    const service = await server(redirectTo(`${storage.origin}/bucket/t1.csv?${SECRET}`));
    const events: ClientEvent[] = [];
    const result = await clientFor(service, events).openResult(`${service.origin}/api/v1/results/t1`);
    expect(await text(result.body)).toBe(CSV);
    expect(service.hits[0]?.headers["x-api-key"]).toBe(API_KEY);
    expect(storage.hits[0]?.url).toBe(`/bucket/t1.csv?${SECRET}`);
    expect(storage.hits[0]?.headers["x-api-key"]).toBeUndefined();
    expect(events.map((e) => e.type === "request" && [e.path, e.status])).toEqual([
      [`${service.origin}/api/v1/results/t1`, 302],
      [`${storage.origin}/bucket/t1.csv`, 200],
    ]);
    secretFree(events);
  });

  it("keeps the key across a relative redirect on the same origin", async () => {
    const service = await server((req, res, n) => (n === 1 ? redirectTo(`/files/t1.csv?${SECRET}`, 307)(req, res, n) : csv(req, res, n)));
    const result = await clientFor(service).openResult(`${service.origin}/api/v1/results/t1`);
    expect(await text(result.body)).toBe(CSV);
    expect(service.hits.map((h) => [h.url, h.headers["x-api-key"]])).toEqual([
      ["/api/v1/results/t1", API_KEY],
      [`/files/t1.csv?${SECRET}`, API_KEY],
    ]);
  });

  it("treats another port on the same host as another origin", async () => {
    const storage = await server(csv);
    const service = await server(redirectTo(`http://127.0.0.1:${storage.port}/x.csv?${SECRET}`, 301));
    await text((await clientFor(service).openResult(`${service.origin}/r`)).body);
    expect(storage.hits[0]?.headers["x-api-key"]).toBeUndefined();
  });

  it("gives up after 5 redirects", async () => {
    const service = await server((_req, res, n) => redirectTo(`/hop/${n}?${SECRET}`)(_req, res, n));
    const events: ClientEvent[] = [];
    const error = await clientFor(service, events)
      .openResult(`${service.origin}/start?${SECRET}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BulkcheckError);
    expect((error as Error).message).toContain("redirected more than 5 times");
    expect(service.hits).toHaveLength(6);
    secretFree(events, error);
  });

  it.each([403, 404, 410])("turns HTTP %i into ResultUrlExpiredError without retrying or leaking the query", async (status) => {
    const storage = await server((req, res) => {
      res.writeHead(status, { "content-type": "application/xml" });
      res.end(`<Error><Code>AccessDenied</Code><Url>${req.url}</Url></Error>`);
    });
    const service = await server(csv);
    const events: ClientEvent[] = [];
    const delays: number[] = [];
    const error = await clientFor(service, events, delays)
      .openResult(`${storage.origin}/r/t1.csv?${SECRET}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResultUrlExpiredError);
    expect(error).toMatchObject({ status, code: "ERR_BULKCHECK_RESULT_URL_EXPIRED" });
    expect((error as Error).message).toContain(`${storage.origin}/r/t1.csv answered HTTP ${status}`);
    expect((error as Error).message).toContain("Check the task again");
    expect(storage.hits).toHaveLength(1);
    expect(delays).toEqual([]);
    secretFree(events, error);
  });

  it("reports another HTTP error with its status, without the query from the error page", async () => {
    const storage = await server((req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`internal error at http://storage.local${req.url}`);
    });
    const service = await server(csv);
    const events: ClientEvent[] = [];
    const error = await clientFor(service, events)
      .openResult(`${storage.origin}/r.csv?${SECRET}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 500, kind: "unavailable" });
    expect(storage.hits).toHaveLength(1);
    secretFree(events, error);
  });

  it("retries a download whose connection is reset, like any GET", async () => {
    const service = await server((req, res, n) => (n === 1 ? dropConnection(req) : csv(req, res, n)));
    const delays: number[] = [];
    const events: ClientEvent[] = [];
    const result = await clientFor(service, events, delays).openResult(`${service.origin}/r.csv?${SECRET}`);
    expect(await text(result.body)).toBe(CSV);
    expect(delays).toEqual([1_000]);
    expect(service.hits).toHaveLength(2);
    secretFree(events);
  });

  it("retries a 503 from result storage", async () => {
    const service = await server((req, res, n) => {
      if (n > 1) return csv(req, res, n);
      res.writeHead(503, { "retry-after": "4" });
      res.end("slow down");
    });
    const delays: number[] = [];
    await text((await clientFor(service, [], delays).openResult(`${service.origin}/r.csv`)).body);
    expect(delays).toEqual([4_000]);
  });

  it("turns a JSON error envelope served with HTTP 200 into an ApiError", async () => {
    const service = await server((req, res) => sendEnvelope(req, res, { code: 40100, msg: "bad key" }, 200));
    const error = await clientFor(service)
      .openResult(`${service.origin}/r.csv?${SECRET}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ apiCode: 40100, kind: "auth" });
  });

  it("rejects a URL that is not http(s) without leaking its query", async () => {
    const service = await server(csv);
    const error = await clientFor(service)
      .openResult(`ftp://files.example.com/r.csv?${SECRET}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    secretFree([], error);
  });

  it("returns the body unbuffered, before the server has finished sending it", async () => {
    let finish: (() => void) | undefined;
    const service = await server((_req, res) => {
      res.writeHead(200, { "content-type": "text/csv" });
      res.write("identifier,activated\n");
      finish = () => res.end("14155550100,true\n");
    });
    const result = await clientFor(service).openResult(`${service.origin}/r.csv`);
    expect(result.contentLength).toBeUndefined();
    const first = await new Promise<Buffer>((resolve) => result.body.once("data", resolve));
    expect(first.toString()).toBe("identifier,activated\n");
    finish?.();
    result.body.resume();
    await new Promise((resolve) => result.body.once("end", resolve));
  });
});

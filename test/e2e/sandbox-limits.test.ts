import { connect } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { SandboxState } from "../../src/sandbox/index.js";
import { holdSlots } from "../helpers/fault-fixtures.js";
import { spawnCli } from "../helpers/cli.js";
import { gbList, identifier, lines, until } from "../helpers/sandbox.js";

/**
 * `bulkcheck sandbox --max-unfinished N --max-in-flight M`, as a process, answers as the
 * spec says: 42900 once N tasks are unfinished, 42901 with Retry-After while M uploads
 * are in flight, neither charged, and a replayed Idempotency-Key still answered.
 */
const servers: Array<ReturnType<typeof spawnCli>> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill("SIGINT");
    await server.done;
  }
});

async function startServer(flags: string[]): Promise<{ url: string; key: string }> {
  const server = spawnCli(["sandbox", "--json", "--port", "0", "--api-key", "sk_limits", ...flags]);
  servers.push(server);
  await until(() => server.output().stdout.includes("\n"));
  const { base_url: url, api_key: key } = JSON.parse(lines(server.output().stdout)[0]!) as { base_url: string; api_key: string };
  return { url, key };
}

async function submit(server: { url: string; key: string }, offset: number, idempotencyKey?: string) {
  const form = new FormData();
  form.append("service_type", "number_validation_batch");
  form.append("country", "GB");
  const text = gbList(500, offset)
    .map((number) => identifier(number) + "\n")
    .join("");
  form.append("file", new Blob([text], { type: "text/plain" }), "numbers.txt");
  const headers: Record<string, string> = { "x-api-key": server.key };
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  const response = await fetch(`${server.url}/api/v1/bulk-tasks`, { method: "POST", headers, body: form });
  const body = (await response.json()) as { code: number; data: { id?: string } };
  return { status: response.status, retryAfter: response.headers.get("retry-after"), code: body.code, id: body.data.id };
}

/** Sends `body` as a multipart submit over a raw socket (so it can end anywhere) and returns the whole answer as text. */
function rawSubmit(server: { url: string; key: string }, body: string): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("utf8")));
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
    socket.end(
      `POST /api/v1/bulk-tasks HTTP/1.1\r\nhost: ${hostname}\r\nx-api-key: ${server.key}\r\n` +
        `content-type: multipart/form-data; boundary=cut\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}

async function state(server: { url: string; key: string }): Promise<SandboxState> {
  const response = await fetch(`${server.url}/_sandbox/state`, { headers: { "x-api-key": server.key } });
  return ((await response.json()) as { data: SandboxState }).data;
}

async function balance(server: { url: string; key: string }): Promise<number> {
  const response = await fetch(`${server.url}/api/v1/balance`, { headers: { "x-api-key": server.key } });
  return ((await response.json()) as { data: { balance_micros: number } }).data.balance_micros;
}

describe("bulkcheck sandbox --max-unfinished and --max-in-flight", () => {
  it("answers 42900 once the unfinished tasks reach --max-unfinished, charging nothing, and still replays a known key", async () => {
    const server = await startServer(["--max-unfinished", "1", "--numbers-per-second", "1"]);
    const first = await submit(server, 0, "list-one");
    expect(first.code).toBe(0);
    const reserved = await balance(server);
    const second = await submit(server, 1000);
    expect([second.status, second.code]).toEqual([429, 42900]);
    expect(await balance(server)).toBe(reserved);
    const replay = await submit(server, 0, "list-one");
    expect([replay.code, replay.id]).toEqual([0, first.id]);
  });

  it("answers 42901 with Retry-After while --max-in-flight uploads are in flight, creating nothing", async () => {
    const server = await startServer(["--max-in-flight", "2", "--retry-after", "3"]);
    const held = await holdSlots(server.url, server.key, 2);
    try {
      while ((await state(server)).stats.slots_in_flight < 2) await delay(10);
      const refused = await submit(server, 0);
      expect([refused.status, refused.code, refused.retryAfter]).toEqual([429, 42901, "3"]);
      expect((await state(server)).tasks).toEqual([]);
    } finally {
      held.release();
    }
    while ((await state(server)).stats.slots_in_flight > 0) await delay(10);
    expect((await submit(server, 0)).code).toBe(0);
  });

  it("answers 40000 to a multipart body that ends in the middle of the file part, and stays up", async () => {
    const server = await startServer([]);
    const field = (name: string, value: string) => `--cut\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const cut =
      field("service_type", "number_validation_batch") +
      field("country", "GB") +
      '--cut\r\ncontent-disposition: form-data; name="file"; filename="numbers.txt"\r\ncontent-type: text/plain\r\n\r\n' +
      "447400100001\n4474001";
    const answer = await rawSubmit(server, cut);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":40000');
    expect(answer).toContain("malformed multipart body");
    expect(await balance(server)).toBe(10_000_000);
    expect((await submit(server, 0)).code).toBe(0);
  });
});

import { truncateSync, writeFileSync } from "node:fs";
import { createServer, request, type ClientRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Fixtures for the fault, crash, hostile-input and security tests: broken files,
 * held request slots, and a tiny service stand-in for answers the sandbox cannot give.
 */

/** The first bytes of a real PNG (signature and IHDR chunk), then filler. */
export function pngBytes(): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const ihdr = Buffer.from("0000000d494844520000000100000001080600000001f15c4889", "hex");
  return Buffer.concat([signature, ihdr, Buffer.alloc(256, 0x42)]);
}

/** A file of `bytes` bytes that takes no disk space (all zeros when read): truncate extends it with a hole. */
export function sparseFile(path: string, bytes: number): string {
  writeFileSync(path, "");
  truncateSync(path, bytes);
  return path;
}

/** `text` as UTF-16 LE without a byte-order mark (what some exports produce). */
export function utf16WithoutBom(text: string): Buffer {
  return Buffer.from(text, "utf16le");
}

/** A valid list with one line broken by bytes that are not UTF-8 (Latin-1 "é" and a lone continuation byte). */
export function invalidUtf8(lines: readonly string[]): Buffer {
  const middle = Math.floor(lines.length / 2);
  const parts = lines.map((line, i) => (i === middle ? Buffer.concat([Buffer.from(line), Buffer.from([0xe9, 0x80])]) : Buffer.from(line)));
  return Buffer.concat(parts.flatMap((part) => [part, Buffer.from("\n")]));
}

export function writeBytes(path: string, bytes: Buffer | string): string {
  writeFileSync(path, bytes);
  return path;
}

/**
 * Occupies `count` of the sandbox's submit slots with uploads that never finish:
 * each sends headers and the start of a multipart body, then stalls. `release()`
 * aborts them, which frees the slots.
 */
export async function holdSlots(baseUrl: string, apiKey: string, count: number): Promise<{ release(): void }> {
  const requests: ClientRequest[] = [];
  for (let i = 0; i < count; i++) {
    const req = request(`${baseUrl}/api/v1/bulk-tasks`, {
      method: "POST",
      headers: { "x-api-key": apiKey, "content-type": "multipart/form-data; boundary=held", "content-length": "100000" },
    });
    req.on("error", () => undefined);
    req.write('--held\r\ncontent-disposition: form-data; name="service_type"\r\n\r\nnumber_validation_batch\r\n--held\r\n');
    requests.push(req);
  }
  return {
    release() {
      for (const req of requests) req.destroy();
    },
  };
}

export interface StandIn {
  url: string;
  /** Requests seen, as "METHOD path" (no query string), with whether they carried X-API-Key. */
  requests: Array<{ line: string; key: boolean }>;
  close(): Promise<void>;
}

/** One canned HTTP answer. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/**
 * A minimal stand-in for the service (or a result host), for answers the sandbox
 * never gives. By default every task it is asked about has succeeded with 2
 * numbers, and its result_url (on this same server, with a signature in the query
 * string) answers `result`; `check` replaces the task answer.
 */
export async function startStandIn(answers: { check?: Answer; result?: Answer } = {}): Promise<StandIn> {
  const requests: StandIn["requests"] = [];
  let url = "";
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    requests.push({ line: `${req.method} ${path}`, key: req.headers["x-api-key"] !== undefined });
    const check = /^\/api\/v1\/bulk-tasks\/([0-9a-f]{32})$/.exec(path);
    const send = (answer: Answer) => res.writeHead(answer.status, answer.headers ?? {}).end(answer.body);
    if (check) {
      send(
        answers.check ?? {
          status: 200,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ code: 0, msg: "success", data: succeededTask(check[1]!, url) }),
        },
      );
    } else if (path.startsWith("/results/") && answers.result) {
      send(answers.result);
    } else {
      send({
        status: 404,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code: 40000, msg: "no such endpoint", data: {} }),
      });
    }
  });
  const listening = await listenLocally(server);
  url = listening.url;
  return { url, requests, close: listening.close };
}

/** Listens on 127.0.0.1, on any free port. */
async function listenLocally(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function succeededTask(id: string, origin: string) {
  return {
    id,
    product: "number_validation_batch",
    status: "success",
    country: "GB",
    total: 2,
    success_cnt: 2,
    failure_cnt: 0,
    result_url: `${origin}/results/${id}.csv?expires=9999999999&sig=SECRETSIGNATURE`,
    created_at: "2025-01-15T09:00:00.000Z",
  };
}

/** A two-row result file of number_validation_batch. */
export const TWO_ROW_RESULT = "identifier,activated\n447400100000,true\n447500100001,false\n";

export interface DripServer {
  url: string;
  /** Requests seen, as "METHOD path". */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A server that answers every request at once with its headers, then sends the
 * body one byte every `intervalMs`, forever: no silence is long enough to trip a
 * body timeout between chunks. With `quickChecks`, task checks answer whole and
 * at once (a succeeded task whose result_url drips instead).
 */
export async function startDripServer(options: { intervalMs: number; quickChecks?: boolean }): Promise<DripServer> {
  const requests: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let url = "";
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    requests.push(`${req.method} ${path}`);
    req.resume();
    const check = /^\/api\/v1\/bulk-tasks\/([0-9a-f]{32})$/.exec(path);
    if (check && options.quickChecks) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: 0, msg: "success", data: succeededTask(check[1]!, url) }));
      return;
    }
    const csv = path.startsWith("/results/");
    res.writeHead(200, { "content-type": csv ? "text/csv" : "application/json" });
    const text = csv ? "identifier,activated\n" : '{"code":0,"msg":"success","data":{"id":"';
    let sent = 0;
    const timer = setInterval(() => res.write(sent < text.length ? text[sent++]! : csv ? "4" : "a"), options.intervalMs);
    timers.add(timer);
    res.once("close", () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  });
  const listening = await listenLocally(server);
  url = listening.url;
  return {
    url,
    requests,
    close() {
      for (const timer of timers) clearInterval(timer);
      return listening.close();
    },
  };
}

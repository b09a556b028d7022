/**
 * A real HTTP server on 127.0.0.1, port 0, scripted by a request counter: the
 * handler gets the 1-based number of each request and decides what to answer.
 * Every request's method, URL and headers are recorded for assertions.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Hit {
  n: number;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void | Promise<void>;

export interface ScriptedServer {
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  port: number;
  hits: Hit[];
  close(): Promise<void>;
}

export async function startServer(handler: Handler, port = 0): Promise<ScriptedServer> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const n = hits.length + 1;
    hits.push({ n, method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    Promise.resolve(handler(req, res, n)).catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${address.port}`,
    port: address.port,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes `{code, msg, data}` as JSON (after draining the request body). */
export function sendEnvelope(
  req: IncomingMessage,
  res: ServerResponse,
  envelope: { code: number; msg?: string; data?: unknown; [extra: string]: unknown },
  status = 200,
  headers: Record<string, string> = {},
): void {
  req.resume();
  const send = (): void => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ msg: envelope.code === 0 ? "success" : "error", ...envelope }));
  };
  if (req.readableEnded) send();
  else req.once("end", send);
}

export function sendRaw(req: IncomingMessage, res: ServerResponse, status: number, contentType: string | undefined, body: string): void {
  req.resume();
  req.once("end", () => {
    res.writeHead(status, contentType ? { "content-type": contentType } : {});
    res.end(body);
  });
}

/** Drops the connection without answering (the client sees a reset or "other side closed"). */
export function dropConnection(req: IncomingMessage): void {
  req.socket.destroy();
}

/** A port nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A clock that only moves when the client sleeps; records every requested delay. */
export function fakeTime(startMs = Date.UTC(2030, 0, 1, 12, 0, 0)): {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  delays: number[];
} {
  let clock = startMs;
  const delays: number[] = [];
  return {
    now: () => clock,
    sleep: async (ms: number) => {
      delays.push(ms);
      clock += ms;
    },
    delays,
  };
}

export const API_KEY = "sk_test_5f3c9a7e1b2d4c6e8f0a";

export const FULL_TASK = {
  id: "0123456789abcdef0123456789abcdef",
  product: "number_validation_batch",
  status: "processing",
  country: "US",
  submitted_lines: 1000,
  total: 1000,
  invalid_cnt: 0,
  no_code_cnt: 0,
  other_country_cnt: 0,
  duplicate_cnt: 0,
  preparing: true,
  created_at: "2030-01-01T12:00:00Z",
};

export const SHORT_FINISHED_TASK = {
  id: "fedcba9876543210fedcba9876543210",
  product: "carrier_batch",
  status: "success",
  country: "GB",
  total: 990,
  created_at: "2030-01-01T12:00:00Z",
  success_cnt: 980,
  failure_cnt: 10,
  result_url: "https://files.example.com/r/fedcba.csv?sig=SECRET",
};

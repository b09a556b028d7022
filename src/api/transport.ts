/**
 * One HTTP exchange over undici, and the translation of its low-level failures.
 * Always goes through an explicit dispatcher (never Node's bundled undici or the
 * global fetch/FormData: mixing the two crashes or sends "[object FormData]").
 */
import type { Readable } from "node:stream";
import type { Dispatcher, FormData } from "undici";
import { EnvHttpProxyAgent } from "undici";
import { operationSignal } from "../operation-signal.js";

export interface Timeouts {
  /** TCP (and TLS) connection establishment. */
  connectMs: number;
  /** From sending the request to receiving the response headers. */
  headersMs: number;
  /**
   * Longest silence between two chunks of the response body; also the whole deadline of a
   * small body (readText), and the window over which a result file must keep its minimum
   * rate (transfer-rate.ts).
   */
  bodyMs: number;
}

/** Defaults sized for a 20 MB upload on a slow link and a service that answers at once. */
export const DEFAULT_TIMEOUTS: Readonly<Timeouts> = Object.freeze({
  connectMs: 10_000,
  headersMs: 60_000,
  bodyMs: 60_000,
});

export function resolveTimeouts(overrides: Partial<Timeouts> = {}): Timeouts {
  return {
    connectMs: overrides.connectMs ?? DEFAULT_TIMEOUTS.connectMs,
    headersMs: overrides.headersMs ?? DEFAULT_TIMEOUTS.headersMs,
    bodyMs: overrides.bodyMs ?? DEFAULT_TIMEOUTS.bodyMs,
  };
}

/** Explicit proxy settings; each one left out falls back to the environment variable. */
export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

/**
 * The default dispatcher: undici's EnvHttpProxyAgent, which honours HTTPS_PROXY,
 * HTTP_PROXY and NO_PROXY (either case) unless `proxy` overrides them, with the
 * client's connect, headers and body timeouts.
 */
export function createDefaultDispatcher(timeouts: Timeouts, proxy: ProxySettings = {}): Dispatcher {
  return new EnvHttpProxyAgent({
    ...proxy,
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
  });
}

export interface Exchange {
  url: URL;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: FormData;
  dispatcher: Dispatcher;
  timeouts: Timeouts;
  signal: AbortSignal | undefined;
}

export interface ExchangeResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & { dump(opts?: { limit: number }): Promise<void> };
}

/**
 * Sends one request and resolves once the response headers arrive. Rejections are undici's
 * raw errors. The request listens to `signal` through a signal of its own (see
 * operationSignal), until its body is read or dropped: a run's requests run concurrently.
 */
export async function exchange(request: Exchange): Promise<ExchangeResponse> {
  const operation = request.signal && operationSignal(request.signal);
  try {
    const response = await request.dispatcher.request({
      origin: request.url.origin,
      path: `${request.url.pathname}${request.url.search}`,
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      signal: operation?.signal,
      headersTimeout: request.timeouts.headersMs,
      bodyTimeout: request.timeouts.bodyMs,
    });
    if (operation) response.body.once("close", operation.release);
    return { status: response.statusCode, headers: response.headers, body: response.body };
  } catch (error) {
    operation?.release();
    throw error;
  }
}

/** The first value of a response header (undici lower-cases names). */
export function headerValue(headers: ExchangeResponse["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Reads a body as UTF-8 text, up to `maxBytes`. A longer body is cut there and
 * the rest discarded (`truncated: true`), and one whose Content-Length says it is
 * longer is not read at all: an envelope is small, and an endless HTML page must
 * not fill memory. The whole body must arrive within `withinMs`: the body timeout
 * only bounds the silence between chunks, which a server sending a byte every few
 * seconds never breaks.
 */
export async function readText(
  response: ExchangeResponse,
  maxBytes: number,
  withinMs: number,
): Promise<{ text: string; truncated: boolean }> {
  const { body } = response;
  const declared = Number(headerValue(response.headers, "content-length") ?? Number.NaN);
  if (Number.isSafeInteger(declared) && declared > maxBytes) {
    body.destroy();
    return { text: "", truncated: true };
  }
  const timer = setTimeout(() => body.destroy(new BodyDeadlineError(withinMs)), withinMs);
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        body.destroy();
        return { text: Buffer.concat(chunks).toString("utf8"), truncated: true };
      }
      chunks.push(chunk);
      size += chunk.length;
    }
    return { text: Buffer.concat(chunks).toString("utf8"), truncated: false };
  } finally {
    clearTimeout(timer);
  }
}

/** A small body (an envelope, an error page) that did not arrive whole within its deadline. */
class BodyDeadlineError extends Error {
  readonly code = "ERR_BULKCHECK_BODY_DEADLINE";

  constructor(ms: number) {
    super(`the response body did not arrive within ${ms} ms`);
  }
}

/**
 * Opening a result_url. The URL's query string is a bearer secret and the API key
 * belongs to the service alone, so: the key is sent only to the base URL's origin,
 * redirects are followed here (at most 5) with the key dropped for any other
 * origin, and logs and messages only ever show origin + path.
 */
import { Readable } from "node:stream";
import { InterruptedError, UsageError } from "../errors.js";
import { retrying } from "./attempts.js";
import { requestRetryEvent } from "./retry-policies.js";
import { toConnectionError } from "./connection-error.js";
import { MAX_ENVELOPE_BYTES, type ClientContext } from "./context.js";
import { parseEnvelope } from "./envelope.js";
import { ApiError, HttpStatusError, ResponseFormatError, ResultUrlExpiredError } from "./errors.js";
import { sanitizeSnippet, stripQuery } from "./redact.js";
import { parseRetryAfter } from "./retry-after.js";
import { withMinimumRate } from "./transfer-rate.js";
import { exchange, headerValue, readText, type ExchangeResponse } from "./transport.js";
import type { ResultDownload } from "./types.js";

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const EXPIRED_STATUSES = new Set([403, 404, 410]);
const ERROR_BODY_BYTES = 64 * 1024;

/** GETs `url`, retrying like any GET, and resolves with the unbuffered body once a 2xx arrives. */
export async function openResult(ctx: ClientContext, url: string): Promise<ResultDownload> {
  const start = parseHttpUrl(url);
  if (!start) throw new UsageError(`The result URL is not an http(s) URL: ${stripQuery(url)}.`);
  const what = `Downloading ${stripQuery(start)}`;
  return retrying(ctx.retry, (attempt) => followRedirects(ctx, start, attempt), ctx.loop, {
    what,
    onRetry: (retry) => ctx.emit(requestRetryEvent(retry)),
  });
}

async function followRedirects(ctx: ClientContext, start: URL, attempt: number): Promise<ResultDownload> {
  let current = start;
  for (let hop = 0; ; hop++) {
    const response = await getOnce(ctx, current, attempt);
    const location = headerValue(response.headers, "location");
    if (!REDIRECT_STATUSES.has(response.status) || location === undefined) return finish(ctx, current, response);

    await response.body.dump({ limit: ERROR_BODY_BYTES }).catch(() => undefined);
    if (hop >= MAX_REDIRECTS) {
      throw new ResponseFormatError(
        `The result URL ${stripQuery(start)} redirected more than ${MAX_REDIRECTS} times. Check the task again for a fresh result URL.`,
        response.status,
        undefined,
      );
    }
    const next = parseHttpUrl(location, current);
    if (!next) {
      throw new ResponseFormatError(
        `The result URL ${stripQuery(start)} redirected to something that is not an http(s) URL.`,
        response.status,
        undefined,
      );
    }
    current = next;
  }
}

/** One GET, with the key only when `url` is on the service's own origin. */
async function getOnce(ctx: ClientContext, url: URL, attempt: number): Promise<ExchangeResponse> {
  const started = ctx.now();
  const headers: Record<string, string> = { "user-agent": ctx.userAgent, accept: "*/*" };
  if (url.origin === ctx.baseUrl.origin) headers["x-api-key"] = ctx.apiKey;
  let status: number | undefined;
  let errorCode: string | undefined;
  try {
    const response = await exchange({
      url,
      method: "GET",
      headers,
      dispatcher: ctx.dispatcher,
      timeouts: ctx.timeouts,
      signal: ctx.signal,
    });
    status = response.status;
    return response;
  } catch (error) {
    if (ctx.signal?.aborted) throw new InterruptedError("Interrupted.", { cause: error });
    const failure = toConnectionError(error, url.origin, ctx.timeouts, true, ctx.scrub);
    errorCode = failure.systemCode ?? failure.reason;
    throw failure;
  } finally {
    ctx.emit({
      type: "request",
      method: "GET",
      path: stripQuery(url),
      status,
      code: undefined,
      ms: ctx.now() - started,
      attempt,
      ...(errorCode === undefined ? {} : { error: errorCode }),
    });
  }
}

/**
 * A 2xx is the file — unless it is JSON, which a result file never is: then it is
 * read, and an error envelope becomes an ApiError (a 200 may carry an error).
 * Anything else is an expired link (403/404/410) or an HTTP error.
 */
async function finish(ctx: ClientContext, url: URL, response: ExchangeResponse): Promise<ResultDownload> {
  const contentType = headerValue(response.headers, "content-type");
  const retryAfterMs = parseRetryAfter(headerValue(response.headers, "retry-after"), ctx.now());
  const shown = stripQuery(url);

  if (response.status >= 200 && response.status < 300) {
    if (!contentType?.toLowerCase().includes("json")) {
      return download(withMinimumRate(response.body, ctx.timeouts.bodyMs), contentType, response.headers);
    }
    const { text, truncated } = await readBody(ctx, url, response, MAX_ENVELOPE_BYTES, true);
    if (truncated) {
      // Read only as far as an envelope may go: what is past it was never read, so it cannot be passed on as the file.
      throw new ResponseFormatError(
        `The result link ${shown} answered with ${contentType} too large to be an envelope (over ${MAX_ENVELOPE_BYTES / 1024 ** 2} MiB); a result file is CSV or zip, so it was not read further. Check the task again for a fresh result URL, or report it to the service.`,
        response.status,
        contentType,
      );
    }
    const envelope = parseEnvelope(text);
    if (envelope && envelope.code !== 0) throw apiError(ctx, envelope, response.status, retryAfterMs);
    return download(Readable.from([Buffer.from(text, "utf8")]), contentType, {});
  }

  const { text } = await readBody(ctx, url, response, ERROR_BODY_BYTES, false);
  if (EXPIRED_STATUSES.has(response.status)) {
    throw new ResultUrlExpiredError(
      `The result link ${shown} answered HTTP ${response.status}: it has expired or is not valid. Check the task again to get a fresh result URL.`,
      response.status,
    );
  }
  const envelope = parseEnvelope(text);
  if (envelope && envelope.code !== 0) throw apiError(ctx, envelope, response.status, retryAfterMs);
  const snippet = sanitizeSnippet(ctx.scrub(text), 80);
  throw new HttpStatusError(
    `Downloading ${shown} failed with HTTP ${response.status}${snippet ? `: "${snippet}"` : ""}. Try again later, or check the task again for a fresh result URL.`,
    response.status,
    retryAfterMs,
  );
}

function download(body: Readable, contentType: string | undefined, headers: ExchangeResponse["headers"]): ResultDownload {
  const declared = headerValue(headers, "content-length");
  const length = declared === undefined ? Number.NaN : Number(declared);
  return {
    body,
    ...(contentType === undefined ? {} : { contentType }),
    ...(Number.isSafeInteger(length) && length >= 0 ? { contentLength: length } : {}),
  };
}

/**
 * Reads a (small) body. When `required`, a broken connection is a ConnectionError
 * (retried like any GET); otherwise it only loses the text of an error page.
 */
async function readBody(
  ctx: ClientContext,
  url: URL,
  response: ExchangeResponse,
  max: number,
  required: boolean,
): Promise<{ text: string; truncated: boolean }> {
  try {
    return await readText(response, max, ctx.timeouts.bodyMs);
  } catch (error) {
    if (ctx.signal?.aborted) throw new InterruptedError("Interrupted.", { cause: error });
    if (required) throw toConnectionError(error, url.origin, ctx.timeouts, true, ctx.scrub);
    return { text: "", truncated: true };
  }
}

function apiError(ctx: ClientContext, envelope: { code: number; msg: string }, status: number, retryAfterMs: number | undefined): ApiError {
  return new ApiError(envelope.code, sanitizeSnippet(ctx.scrub(envelope.msg), 200), status, retryAfterMs);
}

function parseHttpUrl(value: string, base?: URL): URL | undefined {
  try {
    const url = new URL(value, base);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}

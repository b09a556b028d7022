/**
 * One API endpoint call: send, read the envelope, unwrap it, check the resource
 * shape — retried as a whole under the request policy, with a request event per attempt.
 */
import { BulkcheckError, InterruptedError } from "../errors.js";
import type { FormData } from "undici";
import { retrying } from "./attempts.js";
import { requestRetryEvent } from "./retry-policies.js";
import { toConnectionError } from "./connection-error.js";
import { MAX_ENVELOPE_BYTES, type ClientContext } from "./context.js";
import { unwrapEnvelope, type RawResponse } from "./envelope.js";
import { ApiError } from "./errors.js";
import type { ResourceContext } from "./resources.js";
import { parseRetryAfter } from "./retry-after.js";
import { exchange, headerValue, readText, type ExchangeResponse } from "./transport.js";

export interface ApiCall<T> {
  method: "GET" | "POST";
  /** Path under the base URL, starting with /api/v1, already URL-encoded. */
  path: string;
  headers?: Record<string, string>;
  /** Builds a fresh body for each attempt (a multipart stream can be sent only once). */
  body?: () => FormData;
  /** False for a POST without Idempotency-Key: never resent once it may have arrived. */
  replaySafe: boolean;
  /** Checks `data` of a successful envelope and returns the resource. */
  parse: (data: unknown, ctx: ResourceContext) => T;
}

export interface ApiCallResult<T> {
  value: T;
  headers: ExchangeResponse["headers"];
}

export async function callApi<T>(ctx: ClientContext, call: ApiCall<T>): Promise<ApiCallResult<T>> {
  const url = new URL(`${ctx.baseUrl.pathname.replace(/\/+$/, "")}${call.path}`, ctx.baseUrl.origin);
  const what = `${call.method} ${url.pathname}`;
  return retrying(ctx.retry, (attempt) => attemptOnce(ctx, call, url, what, attempt), ctx.loop, {
    what,
    replaySafe: call.replaySafe,
    onRetry: (retry) => ctx.emit(requestRetryEvent(retry)),
  });
}

async function attemptOnce<T>(ctx: ClientContext, call: ApiCall<T>, url: URL, what: string, attempt: number): Promise<ApiCallResult<T>> {
  const started = ctx.now();
  let status: number | undefined;
  let code: number | undefined;
  let errorCode: string | undefined;
  try {
    let response: ExchangeResponse;
    let raw: RawResponse;
    try {
      response = await exchange({
        url,
        method: call.method,
        headers: {
          "x-api-key": ctx.apiKey,
          "user-agent": ctx.userAgent,
          accept: "application/json",
          ...call.headers,
        },
        ...(call.body ? { body: call.body() } : {}),
        dispatcher: ctx.dispatcher,
        timeouts: ctx.timeouts,
        signal: ctx.signal,
      });
      status = response.status;
      const { text, truncated } = await readText(response, MAX_ENVELOPE_BYTES, ctx.timeouts.bodyMs);
      const contentType = headerValue(response.headers, "content-type");
      const retryAfterMs = parseRetryAfter(headerValue(response.headers, "retry-after"), ctx.now());
      raw = { status: response.status, contentType, retryAfterMs, body: text, truncated };
    } catch (error) {
      if (ctx.signal?.aborted) throw new InterruptedError("Interrupted.", { cause: error });
      if (error instanceof BulkcheckError) throw error;
      const failure = toConnectionError(error, ctx.baseUrl.origin, ctx.timeouts, call.replaySafe, ctx.scrub);
      errorCode = failure.systemCode ?? failure.reason;
      throw failure;
    }
    const data = unwrapEnvelope(raw, ctx.scrub);
    code = 0;
    const value = call.parse(data, { what, status: raw.status, contentType: raw.contentType, scrub: ctx.scrub });
    return { value, headers: response.headers };
  } catch (error) {
    if (error instanceof ApiError) code = error.apiCode;
    throw error;
  } finally {
    ctx.emit({
      type: "request",
      method: call.method,
      path: url.pathname,
      status,
      code,
      ms: ctx.now() - started,
      attempt,
      ...(errorCode === undefined ? {} : { error: errorCode }),
    });
  }
}

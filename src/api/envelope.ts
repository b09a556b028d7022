/**
 * Turning an HTTP response into the envelope's `data`, or into the right error.
 * The envelope `code` decides, not the HTTP status: the service may send an error
 * with HTTP 200, and a 4xx with a well-formed envelope is an ordinary API error.
 */
import { ApiCode } from "../spec/codes.js";
import { MAX_ENVELOPE_BYTES } from "./context.js";
import { ApiError, HttpStatusError, ResponseFormatError } from "./errors.js";
import { sanitizeSnippet } from "./redact.js";
import { RETRYABLE_HTTP_STATUSES } from "./retry.js";

/** A response as read off the wire, before interpretation. */
export interface RawResponse {
  status: number;
  contentType: string | undefined;
  /** Parsed Retry-After in milliseconds, if the header was present and readable. */
  retryAfterMs: number | undefined;
  body: string;
  /** True when the body was longer than the client is willing to read and was cut. */
  truncated: boolean;
}

/**
 * Returns `data` of a `code: 0` envelope (shape not yet checked), or throws:
 * - `ApiError` for an envelope with a non-zero code (whatever the HTTP status);
 * - `HttpStatusError` for a non-envelope 429/502/503/504 (a gateway in the way — retryable);
 * - `ResponseFormatError` for anything else that is not an envelope.
 *
 * Unknown extra envelope fields are ignored; a missing `msg` reads as "".
 * `scrub` removes secrets from any text quoted back from the server.
 */
export function unwrapEnvelope(raw: RawResponse, scrub: (text: string) => string): unknown {
  const envelope = raw.truncated ? undefined : parseEnvelope(raw.body);
  if (envelope === undefined) {
    if (raw.truncated && !RETRYABLE_HTTP_STATUSES.has(raw.status)) {
      throw new ResponseFormatError(
        `The server answered HTTP ${raw.status}${contentTypeOf(raw)} too large to be an envelope: over ${MAX_ENVELOPE_BYTES / 1024 ** 2} MiB, more than any answer of the service, so bulkcheck stopped reading it${quotedBody(raw, scrub)}. Check that --base-url points at the bulk-checking service (its paths start with /api/v1).`,
        raw.status,
        raw.contentType,
      );
    }
    if (RETRYABLE_HTTP_STATUSES.has(raw.status)) {
      throw new HttpStatusError(
        `The server answered HTTP ${raw.status} without a service envelope${describeBody(raw, scrub)}. A proxy or gateway in front of the service is probably overloaded; try again later.`,
        raw.status,
        raw.retryAfterMs,
      );
    }
    throw new ResponseFormatError(
      `The server answered HTTP ${raw.status}${describeBody(raw, scrub)}, which is not a service response. Check that --base-url points at the bulk-checking service (its paths start with /api/v1).`,
      raw.status,
      raw.contentType,
    );
  }
  if (envelope.code !== ApiCode.OK) {
    const message = sanitizeSnippet(scrub(envelope.msg), 200);
    throw new ApiError(envelope.code, message, raw.status, raw.retryAfterMs);
  }
  return envelope.data;
}

interface LooseEnvelope {
  code: number;
  msg: string;
  data: unknown;
}

/** The envelope in `body`, or undefined when `body` is not JSON with an integer `code`. */
export function parseEnvelope(body: string): LooseEnvelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.code !== "number" || !Number.isInteger(record.code)) return undefined;
  return {
    code: record.code,
    msg: typeof record.msg === "string" ? record.msg : "",
    data: record.data,
  };
}

function describeBody(raw: RawResponse, scrub: (text: string) => string): string {
  const snippet = sanitizeSnippet(scrub(raw.body), 80);
  const what = snippet === "" ? " and an empty body" : `: "${snippet}"`;
  return `${contentTypeOf(raw)}${raw.truncated ? " (too large to be an envelope)" : ""}${what}`;
}

function contentTypeOf(raw: RawResponse): string {
  return raw.contentType ? ` with ${raw.contentType.split(";", 1)[0]?.trim()}` : " with no content type";
}

/** The start of what was read, quoted, or nothing when nothing was (a Content-Length over the limit). */
function quotedBody(raw: RawResponse, scrub: (text: string) => string): string {
  const snippet = sanitizeSnippet(scrub(raw.body), 80);
  return snippet === "" ? "" : ` ("${snippet}")`;
}

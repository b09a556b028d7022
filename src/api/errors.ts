/**
 * One class per way an API call can fail, each with a stable string `code` (as
 * undici does) on top of the BulkcheckError `kind` the CLI maps to an exit code.
 * Messages are built by the client and already free of secrets.
 */
import { BulkcheckError, PendingError, ProtocolError, ServiceUnavailableError, type ErrorKind } from "../errors.js";
import { apiErrorMessage, kindForApiCode } from "./api-code-text.js";
import type { ConnectionReason } from "./retry.js";

/**
 * The service answered with an envelope whose `code` is not 0. `apiCode` is that
 * code; `kind` follows from it (40100 → "auth", 40200 → "balance", …).
 */
export class ApiError extends BulkcheckError {
  readonly code = "ERR_BULKCHECK_API";

  constructor(
    /** The envelope code, e.g. 42901. */
    readonly apiCode: number,
    /** The envelope `msg`, scrubbed and shortened. */
    readonly serviceMessage: string,
    /** The HTTP status that came with it (not meaningful on its own: errors may arrive as 200). */
    readonly status: number,
    /** The parsed Retry-After header in milliseconds, uncapped; undefined when absent or unreadable. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(kindForApiCode(apiCode), apiErrorMessage(apiCode, serviceMessage));
  }
}

/** The response was not an envelope: HTML, truncated JSON, JSON without a numeric `code`, or a malformed resource. */
export class ResponseFormatError extends ProtocolError {
  readonly code = "ERR_BULKCHECK_PROTOCOL";

  constructor(
    message: string,
    readonly status: number,
    readonly contentType: string | undefined,
  ) {
    super(message);
  }
}

/**
 * An answer with a well-formed task id and a field the client refuses (a `created_at` that is
 * no timestamp, an unknown status…). To an upload, the service may have created that task and
 * reserved its money: the caller keeps `taskId` before anything else. `refused` says what was
 * wrong, as "a task whose created_at is not an ISO 8601 timestamp (…)".
 */
export class RefusedTaskError extends ResponseFormatError {
  constructor(
    message: string,
    status: number,
    contentType: string | undefined,
    readonly taskId: string,
    readonly refused: string,
  ) {
    super(message, status, contentType);
  }
}

/**
 * A non-envelope answer with an HTTP error status: a proxy's 502, result storage's
 * 500, a 429 from a gateway. Retryable statuses make it "unavailable".
 */
export class HttpStatusError extends BulkcheckError {
  readonly code = "ERR_BULKCHECK_HTTP_STATUS";

  constructor(
    message: string,
    readonly status: number,
    readonly retryAfterMs: number | undefined,
  ) {
    super(httpStatusKind(status), message);
  }
}

function httpStatusKind(status: number): ErrorKind {
  return status === 429 || status >= 500 ? "unavailable" : "unexpected";
}

/** No usable response: refused, reset, timed out, closed, DNS or TLS failure. */
export class ConnectionError extends ServiceUnavailableError {
  readonly code = "ERR_BULKCHECK_CONNECTION";

  constructor(
    message: string,
    readonly reason: ConnectionReason,
    /** True when the request may have reached the server (it cannot be known it did not). */
    readonly sent: boolean,
    /** The system or undici error code, e.g. ECONNRESET or UND_ERR_HEADERS_TIMEOUT. */
    readonly systemCode: string | undefined,
    cause: unknown,
    /** The server is on this machine (a loopback address). */
    readonly local = false,
    hint?: string,
  ) {
    super(message, { cause, ...(hint === undefined ? {} : { hint }) });
  }
}

/**
 * The result URL answered 403, 404 or 410: the time-limited link has expired. The
 * caller should check the task again for a fresh `result_url`.
 */
export class ResultUrlExpiredError extends BulkcheckError {
  readonly code = "ERR_BULKCHECK_RESULT_URL_EXPIRED";

  constructor(
    message: string,
    readonly status: number,
  ) {
    super("unavailable", message);
  }
}

/** A finished task's result_url is still absent (exit 8): checked again under the result-link policy. */
export class ResultNotPublishedError extends PendingError {
  readonly code = "ERR_BULKCHECK_RESULT_NOT_PUBLISHED";

  constructor(readonly taskId: string) {
    super(`Task ${taskId} succeeded but the service has not published its result file yet.`, [taskId], {
      hint: `Try again in a minute: bulkcheck download ${taskId}`,
    });
  }
}

/**
 * Every attempt allowed by the retry policy failed, or the deadline would have
 * passed before the next one. `cause` is the last failure; `apiCode` is its
 * envelope code when it was an ApiError (e.g. 42901).
 */
export class RetriesExhaustedError extends ServiceUnavailableError {
  readonly code = "ERR_BULKCHECK_RETRIES_EXHAUSTED";

  constructor(
    message: string,
    readonly attempts: number,
    readonly elapsedMs: number,
    readonly lastError: BulkcheckError,
  ) {
    super(message, { cause: lastError });
  }

  get apiCode(): number | undefined {
    return this.lastError instanceof ApiError ? this.lastError.apiCode : undefined;
  }

  get status(): number | undefined {
    const last = this.lastError;
    if (last instanceof ApiError || last instanceof HttpStatusError || last instanceof ResponseFormatError) return last.status;
    return undefined;
  }
}

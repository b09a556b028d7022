/** The API client's public surface. */
export { createClient, DEFAULT_USER_AGENT, IDEMPOTENCY_KEY_MAX_LENGTH, normaliseBaseUrl } from "./client.js";
export type { ApiClient, ClientEvent, ClientOptions, ResultDownload, SubmitTaskInput, SubmitTaskResult } from "./types.js";
export { ApiError, ConnectionError, HttpStatusError, ResponseFormatError, ResultUrlExpiredError, RetriesExhaustedError } from "./errors.js";
export { kindForApiCode } from "./api-code-text.js";
export {
  backoff,
  DEFAULT_RETRY_POLICY,
  isRetryable,
  nextDelay,
  resolveRetryPolicy,
  RETRYABLE_API_CODES,
  RETRYABLE_HTTP_STATUSES,
  type ConnectionReason,
  type RetryFailure,
  type RetryPolicy,
} from "./retry.js";
export { parseRetryAfter } from "./retry-after.js";
export { createDefaultDispatcher, DEFAULT_TIMEOUTS, type ProxySettings, type Timeouts } from "./transport.js";
export { stripQuery } from "./redact.js";

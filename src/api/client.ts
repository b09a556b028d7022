/**
 * The typed client of the bulk-checking service: submit, check, balance, and
 * opening result files. No terminal output — activity goes to `onEvent`, failures
 * are typed errors (see errors.ts) whose `kind` the CLI maps to an exit code.
 */
import { BulkcheckError, UsageError } from "../errors.js";
import { API_PREFIX } from "../spec/products.js";
import type { Balance, Task } from "../spec/task.js";
import { callApi } from "./api-call.js";
import type { ClientContext } from "./context.js";
import { buildSubmitForm, defaultFileName, openUploadFile } from "./multipart.js";
import { createScrubber } from "./redact.js";
import { toBalance, toTask } from "./resources.js";
import { openResult } from "./result-download.js";
import { resolveRetryPolicy } from "./retry.js";
import { requestPolicy } from "./retry-policies.js";
import { abortableSleep } from "./sleep.js";
import { createDefaultDispatcher, headerValue, resolveTimeouts } from "./transport.js";
import type { ApiClient, ClientEvent, ClientOptions, SubmitTaskInput, SubmitTaskResult } from "./types.js";

export const DEFAULT_USER_AGENT = `bulkcheck (Node.js ${process.version})`;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 128;

/**
 * Builds a client. Validates options up front (UsageError on a bad base URL, key
 * or retry setting) so a misconfiguration fails before anything is sent.
 */
export function createClient(options: ClientOptions): ApiClient {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const apiKey = checkApiKey(options.apiKey);
  const timeouts = resolveTimeouts(options.timeouts);
  const policy = resolveRetryPolicy(options.retry);
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? createDefaultDispatcher(timeouts);
  const now = options.now ?? Date.now;
  const onEvent = options.onEvent;
  const emit = (event: ClientEvent): void => {
    try {
      onEvent?.(event);
    } catch {
      // A logging callback must not turn a successful request into a failure.
    }
  };
  const ctx: ClientContext = {
    baseUrl,
    apiKey,
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    dispatcher,
    timeouts,
    signal: options.signal,
    now,
    scrub: createScrubber([apiKey]),
    emit,
    loop: {
      sleep: options.sleep ?? abortableSleep,
      now,
      random: options.random ?? Math.random,
      signal: options.signal,
    },
    retry: requestPolicy(policy),
  };

  let closing: Promise<void> | undefined;
  const open = (): void => {
    if (closing) throw new BulkcheckError("unexpected", "The API client was used after close(); this is a bulkcheck bug.");
  };

  return {
    async submitTask(input: SubmitTaskInput): Promise<SubmitTaskResult> {
      open();
      if (typeof input.serviceType !== "string" || input.serviceType === "")
        throw new UsageError("A service type is required to submit a task.");
      const key = input.idempotencyKey;
      if (key !== undefined) checkIdempotencyKey(key);
      const file = await openUploadFile(input.file);
      const fileName = input.fileName ?? defaultFileName(input.file);
      const { value, headers } = await callApi(ctx, {
        method: "POST",
        path: `${API_PREFIX}/bulk-tasks`,
        ...(key === undefined ? {} : { headers: { "idempotency-key": key } }),
        body: () => buildSubmitForm({ serviceType: input.serviceType, country: input.country, file, fileName }),
        replaySafe: key !== undefined,
        parse: toTask,
      });
      const replayed = headerValue(headers, "idempotent-replayed")?.trim().toLowerCase() === "true";
      return { task: value, replayed };
    },

    async checkTask(id: string): Promise<Task> {
      open();
      if (typeof id !== "string" || id.trim() === "") throw new UsageError("A task id is required to check a task.");
      const { value } = await callApi(ctx, {
        method: "GET",
        path: `${API_PREFIX}/bulk-tasks/${encodeURIComponent(id)}`,
        replaySafe: true,
        parse: toTask,
      });
      return value;
    },

    async getBalance(): Promise<Balance> {
      open();
      const { value } = await callApi(ctx, { method: "GET", path: `${API_PREFIX}/balance`, replaySafe: true, parse: toBalance });
      return value;
    },

    async openResult(url: string) {
      open();
      return openResult(ctx, url);
    },

    close(): Promise<void> {
      closing ??= ownsDispatcher ? dispatcher.close() : Promise.resolve();
      return closing;
    },
  };
}

/**
 * Accepts http(s) URLs without credentials; drops query and fragment, trailing
 * slashes, and a trailing /api/v1 (users paste the documented endpoint prefix).
 */
export function normaliseBaseUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`The base URL is not a valid URL: ${JSON.stringify(String(value))}. Use e.g. https://api.example.com.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`The base URL must start with https:// or http://, got ${url.protocol}.`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new UsageError("The base URL must not contain a user name or password; set the API key with `bulkcheck config set api-key`.");
  }
  url.search = "";
  url.hash = "";
  url.pathname = url.pathname.replace(/\/+$/, "").replace(new RegExp(`${API_PREFIX}$`), "");
  return url;
}

function checkApiKey(key: string): string {
  if (typeof key !== "string" || key.trim() === "") {
    throw new UsageError("No API key is set. Set one with `bulkcheck config set api-key` or the BULKCHECK_API_KEY environment variable.");
  }
  // Visible ASCII only: anything else cannot travel in a header, and the message must not echo the key.
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new UsageError(
      "The API key contains spaces or characters that cannot be sent in an HTTP header. Set it again with `bulkcheck config set api-key`.",
    );
  }
  return key;
}

function checkIdempotencyKey(key: string): void {
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new UsageError(
      `The idempotency key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters (got ${key.length} characters).`,
    );
  }
}

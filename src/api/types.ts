/** The public shape of the API client. */
import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import type { Balance, Task } from "../spec/task.js";
import type { RetryPolicy } from "./retry.js";
import type { Timeouts } from "./transport.js";

export interface ClientOptions {
  /** e.g. https://api.example.com or http://127.0.0.1:8787; endpoint paths (/api/v1/…) are appended to its path. */
  baseUrl: string;
  apiKey: string;
  /** Overrides of DEFAULT_RETRY_POLICY. */
  retry?: Partial<RetryPolicy>;
  /** Overrides of DEFAULT_TIMEOUTS. connectMs only applies to the default dispatcher. */
  timeouts?: Partial<Timeouts>;
  /** Default: undici EnvHttpProxyAgent (HTTPS_PROXY / HTTP_PROXY / NO_PROXY) with the timeouts. Not closed by close(). */
  dispatcher?: Dispatcher;
  /** Default: an abortable timer. Tests inject one that records the delay and returns at once. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Default: Date.now. Used for Retry-After dates, the retry deadline and event timings. */
  now?: () => number;
  /** Jitter source in [0, 1). Default: Math.random. */
  random?: () => number;
  /** Aborts in-flight requests, result streams and retry waits (Ctrl-C); the call then rejects with InterruptedError. */
  signal?: AbortSignal;
  userAgent?: string;
  /** Activity for --verbose logs. Exceptions thrown by the callback are ignored. */
  onEvent?: (event: ClientEvent) => void;
}

/**
 * `request`: one HTTP exchange finished (or failed without a response: `status`
 * undefined, `error` set to the system code). `path` never has a query string or
 * the key; for result downloads it is origin + path. `code` is the envelope code
 * when there was one. `attempt` counts from 1.
 * `retry`: the client will wait `delayMs` and then make attempt number `attempt` (of at most `maxAttempts`).
 */
export type ClientEvent =
  | {
      type: "request";
      method: "GET" | "POST";
      path: string;
      status: number | undefined;
      code: number | undefined;
      ms: number;
      attempt: number;
      error?: string;
    }
  | {
      type: "retry";
      attempt: number;
      maxAttempts: number;
      delayMs: number;
      /** For logs: "42901 all request slots are occupied", "connection reset (ECONNRESET)". */
      reason: string;
      /** For people: "service at capacity (50303)", "service unreachable (ECONNREFUSED)". */
      summary: string;
      /** The wait the server asked for (Retry-After, capped), when the retry follows it; `delayMs` adds jitter. */
      askedMs?: number;
    };

export interface SubmitTaskInput {
  serviceType: string;
  /** Omitted from the form when absent (carrier tasks). */
  country?: string;
  /** Path of the file to upload; streamed from disk. */
  file: string;
  /** Name sent in the multipart part; default: the file's base name. */
  fileName?: string;
  /**
   * Up to 128 visible ASCII characters. With a key the submission is retried on
   * transient failures (the service returns the original task for a repeated key);
   * without one it is never resent once it may have reached the service.
   */
  idempotencyKey?: string;
}

export interface SubmitTaskResult {
  task: Task;
  /** True when the response had `Idempotent-Replayed: true` (the sandbox sets it; the real service may not). */
  replayed: boolean;
}

export interface ResultDownload {
  /** The response body, not buffered. The caller must consume or destroy it. */
  body: Readable;
  contentType?: string;
  contentLength?: number;
}

export interface ApiClient {
  submitTask(input: SubmitTaskInput): Promise<SubmitTaskResult>;
  checkTask(id: string): Promise<Task>;
  getBalance(): Promise<Balance>;
  /** Opens a task's result_url. Rejects with ResultUrlExpiredError on 403/404/410. */
  openResult(url: string): Promise<ResultDownload>;
  /** Closes the dispatcher the client created (not one passed in). Idempotent. */
  close(): Promise<void>;
}

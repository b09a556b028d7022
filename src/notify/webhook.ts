import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Dispatcher } from "undici";
import { formatDuration } from "../api/attempts.js";
import { classifyConnectionError, nextDelay, type RetryFailure, type RetryPolicy } from "../api/retry.js";
import { createDefaultDispatcher } from "../api/transport.js";

/**
 * The Standard Webhooks signature of one attempt: HMAC-SHA256, keyed with the secret's
 * key, over `id.timestamp.body`, in base64, after the version `v1,`.
 */
export function signWebhook(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/**
 * Whether a `webhook-signature` header (one or more signatures, separated by spaces) holds
 * the v1 signature of `id.timestamp.body` under `key`: what a receiver checks, compared in
 * constant time. The timestamp's age is the receiver's own rule, not checked here.
 */
export function webhookSignatureMatches(key: Buffer, id: string, timestamp: string, body: string, header: string): boolean {
  if (!/^\d+$/.test(timestamp)) return false;
  const expected = Buffer.from(signWebhook(key, id, Number(timestamp), body).slice("v1,".length), "base64");
  return header.split(" ").some((signature) => {
    const [version, value = ""] = signature.split(",", 2);
    const given = Buffer.from(value, "base64");
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** A delivery's id: the same on every attempt of it, so a receiver can tell a retry (or a replay) from a new message. */
export function newWebhookId(): string {
  return `msg_${randomBytes(16).toString("hex")}`;
}

/**
 * How a delivery retries: 5xx answers, timeouts and connection failures, with backoff
 * from 1 s (doubling, at most 8 s, with jitter); a 4xx answer is the receiver's word and
 * is not sent again. The delivery's budget (see Delivery) ends it sooner.
 */
export const DELIVERY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 5,
  deadlineMs: 30_000,
  baseDelayMs: 1_000,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 8_000,
  jitterRatio: 0.2,
});

/** The longest one attempt may take: to connect, and for the answer to arrive. */
const ATTEMPT_TIMEOUT_MS = 10_000;

/** The most of a receiver's answer read (and thrown away). */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface Delivery {
  url: URL;
  /** The JSON body, exactly as signed. */
  body: string;
  /** The key that signs each attempt; absent, the delivery is not signed (a chat's incoming webhook). */
  key?: Buffer | undefined;
  /** How long the whole delivery may take, from its first attempt, retries and waits included. */
  budgetMs: number;
  userAgent: string;
}

export interface DeliveryDeps {
  /** The clock of the webhook-timestamp and of the budget. */
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  /** Ctrl-C or SIGTERM: the delivery stops at once. */
  signal: AbortSignal;
  /** Tests may pass their own; by default undici's, with the proxy settings of the environment. */
  dispatcher?: Dispatcher;
}

/** How a delivery ended; `id` is its webhook-id. */
export type DeliveryEnd =
  | { type: "delivered"; id: string; status: number; attempts: number }
  | { type: "refused"; id: string; status: number; attempts: number }
  | { type: "gave-up"; id: string; attempts: number; last: string }
  | { type: "stopped"; id: string; attempts: number };

type Attempt = { type: "answered"; status: number } | { type: "failed"; failure: RetryFailure; what: string } | { type: "stopped" };

/**
 * POSTs `body` to `url` until a 2xx answer, a 4xx answer, the end of the policy's
 * attempts or of the budget, or `signal`: every attempt carries the same webhook-id, and
 * is signed anew with the time it is sent (receivers refuse old timestamps). Never throws
 * for what the receiver or the network does.
 */
export async function deliverWebhook(delivery: Delivery, deps: DeliveryDeps): Promise<DeliveryEnd> {
  const id = newWebhookId();
  const endsAt = deps.now() + delivery.budgetMs;
  const dispatcher =
    deps.dispatcher ??
    createDefaultDispatcher({ connectMs: ATTEMPT_TIMEOUT_MS, headersMs: ATTEMPT_TIMEOUT_MS, bodyMs: ATTEMPT_TIMEOUT_MS });
  try {
    for (let attempts = 1; ; attempts++) {
      const attempt = await send(delivery, id, dispatcher, deps, Math.min(ATTEMPT_TIMEOUT_MS, Math.max(1, endsAt - deps.now())));
      if (attempt.type === "stopped") return { type: "stopped", id, attempts };
      if (attempt.type === "answered" && attempt.status < 300) return { type: "delivered", id, status: attempt.status, attempts };
      if (attempt.type === "answered" && attempt.status < 500) return { type: "refused", id, status: attempt.status, attempts };
      const failure: RetryFailure = attempt.type === "answered" ? { type: "transient" } : attempt.failure;
      const last = attempt.type === "answered" ? `answered ${attempt.status}` : attempt.what;
      const delay = nextDelay(failure, attempts, DELIVERY_POLICY, deps.random);
      if (delay === null || deps.now() + delay >= endsAt) return { type: "gave-up", id, attempts, last };
      try {
        await deps.sleep(delay, deps.signal);
      } catch {
        return { type: "stopped", id, attempts };
      }
    }
  } finally {
    if (!deps.dispatcher) await dispatcher.close();
  }
}

async function send(delivery: Delivery, id: string, dispatcher: Dispatcher, deps: DeliveryDeps, timeoutMs: number): Promise<Attempt> {
  const timestamp = Math.floor(deps.now() / 1000);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": delivery.userAgent,
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    ...(delivery.key ? { "webhook-signature": signWebhook(delivery.key, id, timestamp, delivery.body) } : {}),
  };
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await dispatcher.request({
      origin: delivery.url.origin,
      path: `${delivery.url.pathname}${delivery.url.search}`,
      method: "POST",
      headers,
      body: delivery.body,
      signal: AbortSignal.any([deps.signal, timeout]),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await response.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined);
    return { type: "answered", status: response.statusCode };
  } catch (error) {
    if (deps.signal.aborted) return { type: "stopped" };
    if (timeout.aborted) {
      return {
        type: "failed",
        failure: { type: "connection", reason: "timeout", sent: true, replaySafe: true },
        what: `no answer within ${formatDuration(timeoutMs)}`,
      };
    }
    const { reason, sent, systemCode } = classifyConnectionError(error);
    return {
      type: "failed",
      failure: { type: "connection", reason, sent, replaySafe: true },
      what: `${reason === "other" ? "failed" : reason}${systemCode ? ` (${systemCode})` : ""}`,
    };
  }
}

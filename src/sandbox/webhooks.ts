import type { Exchange } from "./exchange.js";

/** Where the sandbox receives webhooks (and lists them): outside the service's API, as a user's own receiver is. */
export const WEBHOOKS_PATH = "/webhooks";

/** What one delivery carried, as given to the sandbox's verifier. */
export interface WebhookSigned {
  /** The webhook-id header (empty when absent). */
  id: string;
  /** The webhook-timestamp header, as sent (empty when absent). */
  timestamp: string;
  /** The webhook-signature header (empty when absent). */
  signature: string;
  /** The body exactly as it arrived. */
  body: string;
}

/**
 * Whether a delivery's signature is genuine: true or false when the verifier knows the
 * secret, null when it does not (then nothing can be said).
 */
export type WebhookVerifier = (delivery: WebhookSigned) => boolean | null;

/** One delivery as `GET /webhooks` lists it. */
export interface WebhookDelivery extends WebhookSigned {
  /** The path it was posted to (`/webhooks`, or below it, e.g. `/webhooks/nightly`). */
  path: string;
  received_at: string;
  verified: boolean | null;
}

/** The most of a delivery's body kept; a larger one is refused (413). */
const MAX_BODY_BYTES = 1024 * 1024;

/** The most deliveries kept (the oldest go first): a sandbox left running must not grow without end. */
const MAX_KEPT = 1000;

/** Whether `path` is the receiver's: /webhooks, or a path below it. */
export function isWebhooksPath(path: string): boolean {
  return path === WEBHOOKS_PATH || path.startsWith(`${WEBHOOKS_PATH}/`);
}

/**
 * The sandbox's webhook receiver, for `--notify` to be tried and tested without a server
 * of one's own: `POST /webhooks` (or a path below it) records the delivery and answers 200;
 * `GET /webhooks` lists them, oldest first, as `{"deliveries": [...]}`. Neither needs the
 * API key (a receiver is the user's, not the service's) and neither is ever faulted; the
 * request's log line names the delivery and whether it verified.
 */
export class WebhookReceiver {
  readonly #deliveries: WebhookDelivery[] = [];

  constructor(
    private readonly verify: WebhookVerifier,
    private readonly now: () => number,
  ) {}

  list(): WebhookDelivery[] {
    return [...this.#deliveries];
  }

  async handle(ex: Exchange): Promise<void> {
    if (ex.req.method === "GET" && ex.path === WEBHOOKS_PATH) return json(ex, 200, { deliveries: this.#deliveries });
    if (ex.req.method !== "POST") return ex.send(405, { allow: ex.path === WEBHOOKS_PATH ? "GET, POST" : "POST" }, "", "http=405");
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ex.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return json(ex, 413, { error: `a delivery is at most ${MAX_BODY_BYTES} bytes` });
      chunks.push(chunk);
    }
    const header = (name: string) => String(ex.req.headers[name] ?? "");
    const signed: WebhookSigned = {
      id: header("webhook-id"),
      timestamp: header("webhook-timestamp"),
      signature: header("webhook-signature"),
      body: Buffer.concat(chunks).toString("utf8"),
    };
    const delivery: WebhookDelivery = {
      path: ex.path,
      received_at: new Date(this.now()).toISOString(),
      ...signed,
      verified: this.verify(signed),
    };
    this.#deliveries.push(delivery);
    if (this.#deliveries.length > MAX_KEPT) this.#deliveries.shift();
    ex.mark(`webhook ${delivery.id || "(no webhook-id)"} ${VERDICTS[String(delivery.verified)]}`);
    json(ex, 200, { received: delivery.id, verified: delivery.verified });
  }
}

const VERDICTS: Record<string, string> = { true: "verified", false: "NOT verified", null: "unverified (no webhook secret known)" };

function json(ex: Exchange, status: number, body: object): void {
  ex.send(status, { "content-type": "application/json; charset=utf-8" }, JSON.stringify(body), `http=${status}`);
}

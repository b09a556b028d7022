/** What every request of one client shares: where, who, how, and how to report. */
import type { Dispatcher } from "undici";
import type { LoopDeps, NamedRetryPolicy } from "./attempts.js";
import type { Timeouts } from "./transport.js";
import type { ClientEvent } from "./types.js";

export interface ClientContext {
  /** The base URL without query, fragment or a trailing /api/v1; its path may end in a slash. */
  baseUrl: URL;
  apiKey: string;
  userAgent: string;
  dispatcher: Dispatcher;
  timeouts: Timeouts;
  signal: AbortSignal | undefined;
  now: () => number;
  /** Removes the API key and URL query strings from text quoted in messages. */
  scrub: (text: string) => string;
  emit: (event: ClientEvent) => void;
  loop: LoopDeps;
  /** The request policy with the client's budget (ClientOptions.retry). */
  retry: NamedRetryPolicy;
}

/** The largest body read as an envelope; anything longer is not one. */
export const MAX_ENVELOPE_BYTES = 1024 * 1024;

import { formatDuration } from "../api/attempts.js";
import type { ClientEvent } from "../api/types.js";

/** One --verbose line per request or retry. Paths from the client never carry a query string or the key. */
export function describeEvent(event: ClientEvent): string {
  if (event.type === "retry") {
    return `retry: attempt ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)}s (${event.reason})`;
  }
  const outcome =
    event.error ??
    [event.status, event.code === undefined ? undefined : `code ${event.code}`].filter((part) => part !== undefined).join(" ");
  return `${event.method} ${event.path} → ${outcome} in ${event.ms}ms${event.attempt > 1 ? ` (attempt ${event.attempt})` : ""}`;
}

/**
 * One line for people per retry wait: "service unreachable (ECONNREFUSED), retry 2/8 in 2 s",
 * or, when the service said how long to wait, "service at capacity (50303), retrying in 5 s as asked".
 */
export function describeRetry(event: Extract<ClientEvent, { type: "retry" }>): string {
  if (event.askedMs !== undefined) return `${event.summary}, retrying in ${formatDuration(event.askedMs)} as asked`;
  return `${event.summary}, retry ${event.attempt}/${event.maxAttempts} in ${formatDuration(event.delayMs)}`;
}

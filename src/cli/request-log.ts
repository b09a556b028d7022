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

/** Wording for failures that produced no response, so the user knows what broke and what to check. */
import { formatDuration } from "./attempts.js";
import { ConnectionError } from "./errors.js";
import { isLoopback } from "../config/resolve.js";
import { classifyConnectionError } from "./retry.js";
import type { Timeouts } from "./transport.js";

/**
 * Wraps a raw undici/system error. `where` is an origin (never a URL with a query
 * string). For a request that may have been delivered and cannot be safely resent
 * (`replaySafe` false), the message says so: the task may exist.
 */
export function toConnectionError(
  error: unknown,
  where: string,
  timeouts: Timeouts,
  replaySafe: boolean,
  scrub: (text: string) => string,
): ConnectionError {
  const { reason, sent, systemCode } = classifyConnectionError(error);
  const code = systemCode ? ` (${systemCode})` : "";
  const local = isLoopback(where);
  if (reason === "refused" && local) {
    const port = new URL(where).port || (where.startsWith("https:") ? "443" : "80");
    return new ConnectionError(`Nothing is listening at ${where}${code}.`, reason, sent, systemCode, error, true, localHint(port));
  }
  let text: string;
  switch (reason) {
    case "refused":
      text = `${where} refused the connection${code}. Check --base-url and that the service is running.`;
      break;
    case "connect-timeout":
      text = `Could not connect to ${where} within ${formatDuration(timeouts.connectMs)}${code}. Check --base-url and your network or proxy settings.`;
      break;
    case "unreachable":
      text = `${where} is unreachable from this machine${code}. Check your network, DNS or proxy settings.`;
      break;
    case "dns":
      text = `The host name of ${where} does not resolve${code}. Check --base-url.`;
      break;
    case "tls":
      text = `The secure connection to ${where} failed${code}: ${scrub(messageOf(error))}. Check --base-url and the system's trusted certificates.`;
      break;
    case "reset":
    case "closed":
      text = `The connection to ${where} closed before a complete response arrived${code}.`;
      break;
    case "timeout":
      text = `${where} did not answer in time${code}; the limits are ${formatDuration(timeouts.headersMs)} for the response to start and ${formatDuration(timeouts.bodyMs)} for an answer (for a result file: at least 1 KiB/s over that long). --request-timeout sets both.`;
      break;
    case "other":
      text = `The request to ${where} failed${code}: ${scrub(messageOf(error))}.`;
      break;
  }
  if (sent && !replaySafe) {
    text +=
      " The request may have reached the service, so it was not sent again: check the task list before submitting again, or submit with an idempotency key.";
  }
  return new ConnectionError(text, reason, sent, systemCode, error, local);
}

/** A base URL on this machine is almost always the sandbox, not started (or started on another port). */
function localHint(port: string): string {
  return `Start the local sandbox with: bulkcheck sandbox --port ${port}   (or check --base-url)`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

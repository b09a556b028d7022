import { parseDuration, type DurationRule } from "../config/duration.js";
import { UsageError } from "../errors.js";
import { InvalidArgumentError } from "./commander.js";

/**
 * Flag parsers: commander reports their errors as usage errors (exit 2).
 *
 * Every duration flag is read here, by config/duration.ts: seconds, or with a unit
 * (90s, 15m, 12h, 7d), never longer than a timer can hold. Returns seconds.
 */
export function parseSeconds(value: string): number {
  return durationFlag(value, {});
}

export function parseCount(value: string): number {
  const count = Number(value.replace(/_/g, ""));
  if (!Number.isSafeInteger(count) || count <= 0) throw new InvalidArgumentError(`expected a positive whole number, got "${value}"`);
  return count;
}

export function parseUsd(value: string): number {
  const usd = Number(value.replace(/^\$/, ""));
  if (!Number.isFinite(usd) || usd < 0) throw new InvalidArgumentError(`expected an amount in USD such as 25 or 2.50, got "${value}"`);
  return usd;
}

/** A count where 0 means "none" or "any" (--threads 0, --port 0). */
export function parseCountOrZero(value: string): number {
  return value === "0" ? 0 : parseCount(value);
}

export function parseShare(value: string): number {
  const share = Number(value);
  if (!Number.isFinite(share) || share < 0 || share > 1) throw new InvalidArgumentError(`expected a share between 0 and 1, got "${value}"`);
  return share;
}

/** This process's stdout by a path's name: written as `-` is, never through the path (an atomic write would replace the link). */
const STDOUT_PATHS = new Set(["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]);

/** The file an output flag names (-o, --rejects, --report, --changes): `-` for stdout, as /dev/stdout also is. */
export function parseOutputPath(value: string): string {
  return STDOUT_PATHS.has(value) ? "-" : value;
}

/** An age (--max-age 7d, --older-than 180d): compared with dates, so it may be longer than a timer holds. */
export function parseAge(value: string): number {
  return durationFlag(value, { age: true });
}

/** Where a listing starts: an age back from now, or a moment (an ISO time). */
export type Since = { age: number } | { at: string };

/** --since: an age as parseAge reads it (30d, 12h), or an ISO date (2026-11-01, UTC midnight) or time (2026-11-01T08:00Z). */
export function parseSince(value: string): Since {
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return { age: parseAge(value) };
  const at = Date.parse(value);
  if (Number.isNaN(at))
    throw new InvalidArgumentError(`expected an age (30d, 12h) or an ISO date or time (2026-11-01, 2026-11-01T08:00Z), got "${value}"`);
  return { at: new Date(at).toISOString() };
}

/** A duration that must be more than 0 (a deadline of 0 would mean "none" to undici). */
export function parsePositiveSeconds(value: string): number {
  return durationFlag(value, { aboveZero: true });
}

function durationFlag(value: string, rule: DurationRule): number {
  try {
    return parseDuration(value, rule);
  } catch (error) {
    throw error instanceof UsageError ? new InvalidArgumentError(error.message) : error;
  }
}

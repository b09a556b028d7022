import { UsageError } from "../errors.js";

/**
 * The longest delay a Node timer holds: 2^31−1 ms, about 24.8 days. A longer one
 * fires after 1 ms instead (with only a warning), so a poll interval typed in
 * milliseconds became 1,845 status requests in 5 s, and a --timeout of 30 days ran
 * out at once. Every duration a user gives is refused above it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const SECONDS_PER_UNIT = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** A number (digits, optionally with a fraction) and an optional unit; nothing else. */
const DURATION = /^(\d+(?:\.\d+)?|\.\d+)([smhd]?)$/;

const FORMS = "a number of seconds (90), or one with a unit: s, m, h or d (90s, 15m, 12h, 7d)";

export interface DurationRule {
  /** Refuse 0 (for a deadline, where 0 would mean "none at all"). Default: 0 is allowed. */
  aboveZero?: boolean;
  /**
   * An age, not a wait: compared with dates, never given to a timer (--max-age 30d,
   * ledger-retention 180d), so it may be longer than a timer holds, up to a hundred years.
   */
  age?: boolean;
}

/** The longest age a duration may name: far beyond any result worth keeping, short of a date out of range. */
const MAX_AGE_MS = 100 * 365 * 86_400_000;

/**
 * Reads a duration as users type it for a flag or a setting: a bare number is
 * seconds (the contract every duration flag has had), and `s`, `m`, `h` and `d`
 * name their unit (`90s`, `15m`, `12h`, `7d`; fractions too: `1.5h`).
 *
 * Returns seconds, to the millisecond: the unit of a bare number, so every flag
 * keeps the value it always had and each caller converts once where it arms a
 * timer. A value longer than a timer can hold (MAX_TIMER_MS) is refused, with a
 * message that says which unit the number was read in and what the longest is.
 * @throws UsageError (exit 2) saying what was expected.
 */
export function parseDuration(text: string, rule: DurationRule = {}): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new UsageError(`expected a duration: ${FORMS}; got "${text}"`);
  const [, amount, unit] = match as unknown as [string, string, keyof typeof SECONDS_PER_UNIT | ""];
  const ms = Math.round(Number(amount) * SECONDS_PER_UNIT[unit || "s"] * 1000);
  if (rule.age ? ms > MAX_AGE_MS : ms > MAX_TIMER_MS)
    throw new UsageError(tooLong(text.trim(), unit, ms, rule.age ? MAX_AGE_MS : MAX_TIMER_MS));
  if (rule.aboveZero && ms === 0) throw new UsageError(`expected a duration above 0 (such as 30, 30s or 5m); got "${text}"`);
  return ms / 1000;
}

/** "3600000 is read as seconds (41.7 days); the longest is …": the unit as it was read, and the bound. */
function tooLong(text: string, unit: string, ms: number, maxMs: number): string {
  const read = unit === "" ? `${text} is read as seconds (${days(ms)})` : `${text} is ${days(ms)}`;
  // Rounded down, so that the longest as said (24.8d) is accepted when typed.
  const longest = `the longest is ${Math.floor(maxMs / 1000)} seconds (${days(maxMs, Math.floor)})`;
  return `${read}; ${longest}. A number without a unit is seconds; 15m, 12h and 7d name theirs.`;
}

/** Days to one decimal: "41.7 days". */
function days(ms: number, round: (tenths: number) => number = Math.round): string {
  return `${round(ms / 8_640_000) / 10} days`;
}

/** Seconds as the shortest way to type them back: `12h`, `7d`, `90s`, `0`. */
export function formatAge(seconds: number): string {
  if (seconds === 0) return "0";
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
  ] as const) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

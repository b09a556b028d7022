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
}

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
  if (ms > MAX_TIMER_MS) throw new UsageError(tooLong(text.trim(), unit, ms));
  if (rule.aboveZero && ms === 0) throw new UsageError(`expected a duration above 0 (such as 30, 30s or 5m); got "${text}"`);
  return ms / 1000;
}

/** "3600000 is read as seconds (41.7 days); the longest is …": the unit as it was read, and the bound. */
function tooLong(text: string, unit: string, ms: number): string {
  const read = unit === "" ? `${text} is read as seconds (${days(ms)})` : `${text} is ${days(ms)}`;
  // Rounded down, so that the longest as said (24.8d) is accepted when typed.
  const longest = `the longest is ${Math.floor(MAX_TIMER_MS / 1000)} seconds (${days(MAX_TIMER_MS, Math.floor)})`;
  return `${read}; ${longest}. A number without a unit is seconds; 15m, 12h and 7d name theirs.`;
}

/** Days to one decimal: "41.7 days". */
function days(ms: number, round: (tenths: number) => number = Math.round): string {
  return `${round(ms / 8_640_000) / 10} days`;
}

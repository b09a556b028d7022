/**
 * Parses an HTTP `Retry-After` value into a wait in milliseconds.
 *
 * RFC 9110 §10.2.3 allows two forms: `delay-seconds` (one or more digits) and an
 * `HTTP-date` (IMF-fixdate, or the obsolete RFC 850 and asctime forms a recipient
 * must still accept). Anything else — negative numbers, fractions, ISO dates,
 * garbage — yields `undefined`, so the caller falls back to exponential backoff
 * rather than trusting a value it cannot read. A date in the past yields 0.
 *
 * The result is not capped here: capping is policy (see `nextDelay`), parsing is not.
 */
export function parseRetryAfter(value: string | readonly string[] | undefined | null, nowMs: number): number | undefined {
  const raw = typeof value === "string" || value == null ? value : value[0];
  if (typeof raw !== "string") return undefined;
  const text = raw.trim();
  if (text === "") return undefined;

  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }

  let at: number;
  if (IMF_FIXDATE.test(text) || RFC850_DATE.test(text)) at = Date.parse(text);
  // asctime carries no zone; HTTP dates are always GMT, while Date.parse would assume local time.
  else if (ASCTIME_DATE.test(text)) at = Date.parse(`${text} GMT`);
  else return undefined;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "\\d{2}:\\d{2}:\\d{2}";

const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

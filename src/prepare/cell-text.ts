/**
 * A workbook cell as text, the way Excel shows it where that matters for a phone list:
 * preparation classifies this text exactly as it classifies a CSV field, and a join writes
 * it back as a text cell.
 */

/** What exceljs's reader gives for a cell: a plain value, or an object for formulas, rich text, errors and links. */
export type WorkbookValue =
  | null
  | undefined
  | string
  | number
  | boolean
  | Date
  | { result?: unknown }
  | { richText: ReadonlyArray<{ text?: string }> }
  | { error: string }
  | { text: string };

/** Excel keeps 15 significant digits; a whole number at or above this has lost some (or was never a phone number). */
const EXACT_DIGITS_LIMIT = 1e15;
/** A number format that only pads digits: `00000000000`, `0##########`, and with a literal `+` first. */
const DIGITS_FORMAT = /^(\\\+|"\+"|\+)?([0#]+)$/;
/** ST_Xstring's escape for a character XML cannot hold (`_x000D_`), which exceljs's reader leaves as it is. */
const XSTRING_ESCAPE = /_x([0-9A-Fa-f]{4})_/g;

/**
 * The text of a cell, from its value and its number format (exceljs's `cell.numFmt`):
 * - text as it is (rich text joined, `_xHHHH_` escapes decoded);
 * - a whole number below 10^15 as its digits (`447400123456`), padded as a digits-only
 *   format pads it (`00000000000` shows 7400123456 as `07400123456`);
 * - any other number as Excel's General format shows it: 15 significant digits, and
 *   scientific notation from 10^15 (`4.47400123456789E+17`), which preparation's
 *   spreadsheet-notation rule then classes `invalid` as it would in a CSV;
 * - a date as `YYYY-MM-DD` (with ` HH:MM:SS` when it has a time), a boolean as
 *   `TRUE`/`FALSE`, an error as its code (`#N/A`);
 * - a formula as its cached result (never the formula), "" when there is none.
 */
export function cellText(value: WorkbookValue, numFmt: string | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value.includes("_x") ? value.replace(XSTRING_ESCAPE, unescapeChar) : value;
  if (typeof value === "number") return numberText(value, numFmt);
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (value instanceof Date) return dateText(value);
  if ("richText" in value) return cellText(value.richText.map((run) => run.text ?? "").join(""), undefined);
  if ("error" in value) return value.error;
  if ("text" in value) return cellText(value.text, undefined);
  return "result" in value ? resultText(value.result, numFmt) : "";
}

function resultText(result: unknown, numFmt: string | undefined): string {
  if (typeof result === "number" && Number.isNaN(result)) return ""; // an error result, or none cached
  if (typeof result === "string" || typeof result === "number" || typeof result === "boolean" || result instanceof Date) {
    return cellText(result, numFmt);
  }
  return "";
}

/** The character an escape stands for; NUL, which no cell can hold and preparation uses between values, as U+FFFD. */
function unescapeChar(_escape: string, hex: string): string {
  const code = parseInt(hex, 16);
  return code === 0 ? "\ufffd" : String.fromCharCode(code);
}

/** A number as the digits or the General text Excel shows (see cellText). */
export function numberText(value: number, numFmt: string | undefined): string {
  if (Number.isInteger(value) && Math.abs(value) < EXACT_DIGITS_LIMIT) {
    const digits = String(value === 0 ? 0 : value);
    return value >= 0 ? padded(digits, numFmt) : digits;
  }
  const general = Number(value.toPrecision(15));
  const magnitude = Math.abs(general);
  if (magnitude >= EXACT_DIGITS_LIMIT || (magnitude > 0 && magnitude < 1e-9)) return scientific(general);
  return String(general);
}

/** Digits as a digits-only number format shows them: zero-padded to its `0`s, after its `+`. */
function padded(digits: string, numFmt: string | undefined): string {
  const match = numFmt === undefined ? null : DIGITS_FORMAT.exec(numFmt);
  if (!match) return digits;
  const placeholders = match[2]!;
  const zeros = placeholders.includes("0") ? placeholders.length - placeholders.indexOf("0") : 0;
  return (match[1] === undefined ? "" : "+") + digits.padStart(zeros, "0");
}

/** `4.47400123456789E+17`: Excel's scientific notation, with at least two exponent digits. */
function scientific(value: number): string {
  const [mantissa, exponent] = value.toExponential().split("e") as [string, string];
  const sign = exponent.startsWith("-") ? "-" : "+";
  return `${mantissa}E${sign}${exponent.replace(/^[+-]/, "").padStart(2, "0")}`;
}

/** A date cell (exceljs gives it in UTC, holding the sheet's own clock time) as ISO text. */
function dateText(date: Date): string {
  if (Number.isNaN(date.getTime())) return "";
  const iso = date.toISOString();
  const time = iso.slice(11, 19);
  return time === "00:00:00" ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${time}`;
}

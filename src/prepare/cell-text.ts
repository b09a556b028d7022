/**
 * A workbook cell as text, the way Excel shows it where that matters for a phone list:
 * preparation classifies this text exactly as it classifies a CSV field, and a join writes
 * it back as a text cell.
 */

import { MAX_CELL_CHARS } from "../results/xlsx-xml.js";

/**
 * A cell's value as the sheet's reader gives it (workbook-cells.ts): text (a shared, inline
 * or formula string, rich text's runs joined), a number, a date (a number whose format is a
 * date's), a boolean or an error code. A formula is its cached value, typed the same way.
 */
export type WorkbookValue = null | undefined | string | number | boolean | Date | { error: string };

/** Excel keeps 15 significant digits; a whole number at or above this has lost some (or was never a phone number). */
const EXACT_DIGITS_LIMIT = 1e15;
/** A number format that only pads digits: `00000000000`, `0##########`, and with a literal `+` first. */
const DIGITS_FORMAT = /^(\\\+|"\+"|\+)?([0#]+)$/;
/** ST_Xstring's escape for a character XML cannot hold (`_x000D_`), which the XML parser leaves as it is. */
const XSTRING_ESCAPE = /_x([0-9A-Fa-f]{4})_/g;

/**
 * The text of a cell, from its value and its number format's code:
 * - text as it is (`_xHHHH_` escapes decoded);
 * - a whole number below 10^15 as its digits (`447400123456`), padded as a digits-only
 *   format pads it (`00000000000` shows 7400123456 as `07400123456`);
 * - any other number as Excel's General format shows it: 15 significant digits, and
 *   scientific notation from 10^15 (`4.47400123456789E+17`), which preparation's
 *   spreadsheet-notation rule then classes `invalid` as it would in a CSV;
 * - a date as `YYYY-MM-DD` (with ` HH:MM:SS` when it has a time), a boolean as
 *   `TRUE`/`FALSE`, an error as its code (`#N/A`).
 */
export function cellText(value: WorkbookValue, numFmt: string | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value.includes("_x") ? value.replace(XSTRING_ESCAPE, unescapeChar) : value;
  if (typeof value === "number") return numberText(value, numFmt);
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (value instanceof Date) return dateText(value);
  return value.error;
}

/**
 * A text as a workbook part stores it, `_xHHHH_` escapes included (seven characters for
 * one): past this it shows more than Excel's 32,767 characters in a cell, whatever it decodes to.
 */
export const MAX_STORED_CELL_CHARS = 7 * MAX_CELL_CHARS;

/** Whether a stored text shows more characters than Excel holds in a cell (decoding it only when it might). */
export function showsMoreThanACell(stored: string): boolean {
  return stored.length > MAX_CELL_CHARS && cellText(stored, undefined).length > MAX_CELL_CHARS;
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

/** A date (in UTC, holding the sheet's own clock time) as ISO text. */
function dateText(date: Date): string {
  if (Number.isNaN(date.getTime())) return "";
  const iso = date.toISOString();
  const time = iso.slice(11, 19);
  return time === "00:00:00" ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${time}`;
}

const DAY_MS = 86_400_000;
/** 1970-01-01 as a serial of the 1900 date system; the 1904 system's serials are 1,462 days later. */
const UNIX_EPOCH_SERIAL = 25_569;
const DATE_1904_OFFSET = 1_462;
/** 9999-12-31, the last date Excel shows; it shows #### for a date serial past it or below 0. */
const LAST_SERIAL = 2_958_466;

/**
 * The date a date-formatted number stands for (in UTC, the sheet's clock time), rounded to
 * the millisecond; undefined outside the dates Excel shows. In the 1900 date system Excel
 * counts a 29 February 1900 that never was, so serials before it are a day later than the
 * arithmetic says (serial 1 is 1900-01-01).
 */
export function excelDate(serial: number, date1904: boolean): Date | undefined {
  if (!(serial >= 0 && serial < LAST_SERIAL)) return undefined;
  const days = serial - UNIX_EPOCH_SERIAL + (date1904 ? DATE_1904_OFFSET : serial < 60 ? 1 : 0);
  return new Date(Math.round(days * DAY_MS));
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?/;

/** A cell of type `d` (an ISO 8601 date, as a few writers store dates), its clock time as written. */
export function isoDate(text: string): Date | undefined {
  const parts = ISO_DATE.exec(text.trim());
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1).map((part) => Number(part ?? 0));
  return new Date(Date.UTC(year!, month! - 1, day, hour, minute, second));
}

import type { CountryCode } from "libphonenumber-js/max";
import { UsageError } from "../errors.js";
import { afterInternationalPrefix, callingCodeOf, parseDigits, type ParsedDigits } from "./digit-parser.js";
import { fullParser } from "./full-parser.js";
import { countryPlan } from "./numbering-plans.js";
import { compactNumber, expandScientific, isScientific, precleanCell } from "./preclean.js";

export { expandScientific, precleanCell } from "./preclean.js";

/**
 * What preparation decides for one cell. `duplicate` is decided later by the
 * caller that sees every row; a single cell is one of the others.
 */
export type CellClass = "kept" | "blank" | "invalid" | "no_code" | "other_country";
export type RowClass = CellClass | "duplicate";

export interface ClassifyOptions {
  /** Task country (ISO 3166-1 alpha-2). Absent only for the carrier product, where numbers must carry their own code. */
  country?: CountryCode;
  /** Class numbers written without their country code as `no_code`, as the service does. */
  requireCountryCode?: boolean;
  /** Class regions that share the task's calling code (GG/JE/IM under +44) as `other_country`. */
  strictRegion?: boolean;
}

export interface Classification {
  class: CellClass;
  /** Digits including the country code, no plus: the spec's identifier. Set for kept, other_country and no_code. */
  identifier?: string;
  /** Why a row was excluded, in words a user can act on. */
  reason?: string;
  /** The number was written in national format and got the task country's code. */
  national?: boolean;
  /** Region of a kept number that differs from the task country but shares its calling code. */
  sharedRegion?: string;
  /** An extension that was dropped from the cell. */
  extension?: string;
}

export const REASONS = {
  blank: "empty cell",
  invalid: "not a valid phone number",
  notANumber: "contains characters that are not part of a phone number",
  scientific: "spreadsheet scientific notation lost digits; format the column as text and export again",
  noCode: "number is written without its country code",
  noCodeNoCountry: "number has no country code and the task has no country",
} as const;

const NON_DIGITS = /\D/g;
const PLUS = 43;
const ZERO = 48;
const NINE = 57;
const SPACED_NUMBER = /^[+\d ()\-/]+$/;
const SPACING = /[ ()\-/]/g;
const BLANK: Classification = { class: "blank", reason: REASONS.blank };
const INVALID: Classification = { class: "invalid", reason: REASONS.invalid };

/**
 * Classifies one cell for a task. Pure: the same input always gives the same answer.
 *
 * The cell is pre-cleaned, reduced to `+`/digits and routed: a leading `+`, the
 * task country's international prefix, or digits starting with its calling code
 * that are valid read that way carry their own code; anything else is national.
 * Validity and region come from libphonenumber-js's max metadata (via
 * `parseDigits`, proven identical to the library); a cell that is not plain
 * digits after cleaning goes to the library's full parser.
 */
export function classifyCell(raw: string, options: ClassifyOptions): Classification {
  // Already `+`/digits (a third of a typical export, and every line of a service-ready list): nothing to clean.
  if (isCanonical(raw)) return classifyDigits(raw, options);
  // Digits written with spaces, brackets, dashes or slashes: precleaning would only drop that punctuation.
  if (SPACED_NUMBER.test(raw)) {
    const digits = raw.replace(SPACING, "");
    if (isCanonical(digits)) return classifyDigits(digits, options);
  }
  const { text, extension } = precleanCell(raw);
  if (text === "") return BLANK;
  let cell = text;
  if (isScientific(cell)) {
    const expanded = expandScientific(cell);
    if (expanded === undefined) return { class: "invalid", reason: REASONS.scientific };
    cell = expanded;
  }
  let digits = compactNumber(cell);
  let ext = extension;
  if (!isCanonical(digits)) {
    // Words such as "n/a": no number has fewer than three digits, and the library's refusal is slow (it builds an Error).
    if (digits.replace(NON_DIGITS, "").length < 3) return { class: "invalid", reason: REASONS.notANumber };
    // Not plain digits: the library's full parser decides whether it is a number at all
    // (an extension in a form precleanCell does not strip, say); its digits are then routed as usual.
    const library = fullParser();
    const phone = library.parsePhoneNumberFromString(cell, { defaultCountry: options.country, extract: false });
    if (!phone?.isValid()) return { class: "invalid", reason: REASONS.notANumber };
    const all = library.parseIncompletePhoneNumber(cell);
    digits = phone.ext ? all.slice(0, all.length - phone.ext.length) : all;
    ext = phone.ext ?? ext;
  }
  const result = classifyDigits(digits, options);
  return ext === undefined ? result : { ...result, extension: ext };
}

/** Digits with an optional leading `+` (what /^\+?\d+$/ accepts; a loop is cheaper here, on every cell). */
function isCanonical(text: string): boolean {
  let i = text.charCodeAt(0) === PLUS ? 1 : 0;
  if (i >= text.length) return false;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) return false;
  }
  return true;
}

/** Routes `+`/digits to an international or national reading and places the number. */
function classifyDigits(digits: string, options: ClassifyOptions): Classification {
  const country = options.country;
  const home = country === undefined ? undefined : callingCodeOrThrow(country);
  if (digits.startsWith("+")) return international(digits, options, home);
  if (country === undefined) {
    if (digits.startsWith("00")) return international("+" + digits.slice(2), options, home);
    if (digits.startsWith("0")) return { class: "no_code", reason: REASONS.noCodeNoCountry };
    // The service's own identifiers are calling code + number without the plus.
    return international("+" + digits, options, home);
  }
  const afterPrefix = afterInternationalPrefix(digits, country);
  if (afterPrefix !== undefined) return international("+" + afterPrefix, options, home);
  if (digits.startsWith(home!)) {
    const withCode = parseDigits("+" + digits);
    if (withCode?.valid) return place(withCode, options, home, false);
  }
  const national = parseDigits(digits, country);
  if (!national?.valid) return INVALID;
  // The library itself may read a calling code written without its plus.
  if (national.callingCode + national.nationalNumber === digits) return place(national, options, home, false);
  if (options.requireCountryCode) {
    return { class: "no_code", identifier: national.callingCode + national.nationalNumber, reason: REASONS.noCode };
  }
  return place(national, options, home, true);
}

function international(plusDigits: string, options: ClassifyOptions, home: string | undefined): Classification {
  const phone = parseDigits(plusDigits);
  return phone?.valid ? place(phone, options, home, false) : INVALID;
}

/** Decides kept / other_country for a valid number; `home` is the task country's calling code. */
function place(phone: ParsedDigits, options: ClassifyOptions, home: string | undefined, national: boolean): Classification {
  const identifier = phone.callingCode + phone.nationalNumber;
  const country = options.country;
  if (country === undefined) return { class: "kept", identifier };
  const region = phone.country;
  if (phone.callingCode !== home) {
    const where = region === undefined ? `+${phone.callingCode}` : `+${phone.callingCode} (${region})`;
    return { class: "other_country", identifier, reason: `number belongs to ${where}, not ${country}` };
  }
  const kept: Classification = national ? { class: "kept", identifier, national } : { class: "kept", identifier };
  if (region === undefined || region === country) return kept;
  if (options.strictRegion) {
    return {
      class: "other_country",
      identifier,
      reason: `number belongs to ${region}, which shares +${phone.callingCode} with ${country}`,
    };
  }
  return { ...kept, sharedRegion: region };
}

function callingCodeOrThrow(country: string): string {
  const code = callingCodeOf(country);
  if (code === undefined)
    throw new UsageError(`Unknown country code: ${country}.`, { hint: "Use an ISO 3166-1 alpha-2 code such as GB or US." });
  return code;
}

/** True for an ISO 3166-1 alpha-2 code that libphonenumber-js knows. */
export function isKnownCountry(code: string): code is CountryCode {
  return /^[A-Z]{2}$/.test(code) && countryPlan(code) !== undefined;
}

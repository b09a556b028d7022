import type { CountryCode } from "libphonenumber-js/max";
import { REASONS, type Classification, type ClassifyOptions } from "./classification.js";
import { classifyDigits, type DigitsSource } from "./digit-classes.js";
import { fullParser } from "./full-parser.js";
import { callingCodePlans, countryPlan } from "./numbering-plans.js";
import { bracketedCode, compactNumber, expandScientific, isScientific, MAX_CELL_CHARS, precleanCell, trimEdges } from "./preclean.js";

export { expandScientific, precleanCell } from "./preclean.js";
export { REASONS, type CellClass, type Classification, type ClassifyOptions, type DigitsReading, type RowClass } from "./classification.js";

const NON_DIGITS = /\D/g;
const PLUS = 43;
const ZERO = 48;
const NINE = 57;
const OPEN_BRACKET = 40;
const SPACED_NUMBER = /^[+\d ()\-/]+$/;
const SPACING = /[ ()\-/]/g;
const BLANK: Classification = { class: "blank", reason: REASONS.blank };
const TOO_LONG: Classification = { class: "invalid", reason: REASONS.tooLong };

/**
 * Classifies one cell for a task. Pure: the same input always gives the same answer.
 *
 * A cell longer than MAX_CELL_CHARS once its edge spaces are trimmed is invalid
 * before any cleaning, so no pattern ever runs on a hostile cell. The rest is
 * pre-cleaned, reduced to `+`/digits and routed by classifyDigits. Validity and
 * region come from libphonenumber-js's max metadata (via `parseDigits`, proven
 * identical to the library); a cell that is not plain digits after cleaning goes
 * to the library's full parser.
 */
export function classifyCell(raw: string, options: ClassifyOptions): Classification {
  const trimmed = trimEdges(raw);
  if (trimmed.length > MAX_CELL_CHARS) return TOO_LONG;
  // Already `+`/digits (a third of a typical export, and every line of a service-ready list): nothing to clean.
  if (isCanonical(trimmed)) return classifyDigits(trimmed, options, "cell");
  // Digits written with spaces, dashes or slashes: precleaning would only drop that punctuation.
  // A bracket first may hold a calling code, `(0044) …`, which the slow path reads.
  if (trimmed.charCodeAt(0) !== OPEN_BRACKET && SPACED_NUMBER.test(trimmed)) {
    const digits = trimmed.replace(SPACING, "");
    if (isCanonical(digits)) return classifyDigits(digits, options, "cell");
  }
  const { text, extension } = precleanCell(trimmed);
  if (text === "") return BLANK;
  let cell = text;
  let source: DigitsSource = "cell";
  if (isScientific(cell)) {
    const expanded = expandScientific(cell);
    if (expanded === undefined) return { class: "invalid", reason: REASONS.scientific };
    cell = expanded;
    source = "spreadsheet";
  }
  cell = bracketedCode(cell, isCallingCode);
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
    source = "parsed";
  }
  const result = classifyDigits(digits, options, source);
  const expanded = source === "spreadsheet" ? { ...result, spreadsheetExpanded: true as const } : result;
  return ext === undefined ? expanded : { ...expanded, extension: ext };
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

function isCallingCode(code: string): boolean {
  return callingCodePlans(Number(code)) !== undefined;
}

/** True for an ISO 3166-1 alpha-2 code that libphonenumber-js knows. */
export function isKnownCountry(code: string): code is CountryCode {
  return /^[A-Z]{2}$/.test(code) && countryPlan(code) !== undefined;
}

import {
  getCountryCallingCode,
  isSupportedCountry,
  parsePhoneNumberFromString,
  type CountryCode,
  type PhoneNumber,
} from "libphonenumber-js/max";

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
  /** Digits including the country code, no plus: the spec's identifier. Set for kept and other_country. */
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

const EXTENSION = /\s*(?:;?\s*ext\.?|extension|x|#)\s*(\d{1,7})$/i;
const EXCEL_SCIENTIFIC = /^(\d)(?:\.(\d+))?e\+?(\d{1,2})$/i;
const SURROUNDING_QUOTES = /^(["'“”‘’])(.*)\1$/s;
const EDGE_SPACE = /^[\s\u00a0\u200b\ufeff]+|[\s\u00a0\u200b\ufeff]+$/g;

/**
 * Turns the text of a cell into what libphonenumber-js can parse: full-width
 * digits folded, spaces, quotes, apostrophes, `tel:`, a spreadsheet's `.0` and an
 * extension removed.
 */
export function precleanCell(raw: string): { text: string; extension?: string } {
  let text = raw.normalize("NFKC").replace(EDGE_SPACE, "");
  const quoted = SURROUNDING_QUOTES.exec(text);
  if (quoted) text = quoted[2]!.replace(EDGE_SPACE, "");
  if (text.startsWith("'")) text = text.slice(1);
  if (/^tel:/i.test(text)) text = text.slice(4);
  if (text.endsWith(".0")) text = text.slice(0, -2);
  const ext = EXTENSION.exec(text);
  if (ext && ext.index > 0) {
    return { text: text.slice(0, ext.index).trim(), extension: ext[1]! };
  }
  return { text: text.trim() };
}

/**
 * Expands `4.47911123456E+11` back to digits when the mantissa kept every digit;
 * returns undefined when digits were lost (the cell cannot be recovered).
 */
export function expandScientific(text: string): string | undefined {
  const m = EXCEL_SCIENTIFIC.exec(text);
  if (!m) return undefined;
  const digits = m[1]! + (m[2] ?? "");
  // Trailing zeros are indistinguishable from rounding, so only a mantissa holding every digit is trusted.
  return digits.length === Number(m[3]) + 1 ? digits : undefined;
}

function identifierOf(phone: PhoneNumber): string {
  return phone.number.slice(1);
}

function parseInternational(digitsWithPlus: string): PhoneNumber | undefined {
  const phone = parsePhoneNumberFromString(digitsWithPlus, { extract: false });
  return phone?.isValid() ? phone : undefined;
}

/** Classifies one cell for a task. Pure: the same input always gives the same answer. */
export function classifyCell(raw: string, options: ClassifyOptions): Classification {
  const { text, extension } = precleanCell(raw);
  const withExtension = <T extends Classification>(c: T): T => (extension ? { ...c, extension } : c);
  if (text === "") return { class: "blank" };

  let cell = text;
  if (EXCEL_SCIENTIFIC.test(cell)) {
    const expanded = expandScientific(cell);
    if (expanded === undefined) {
      return {
        class: "invalid",
        reason: "spreadsheet scientific notation lost digits; format the column as text and export again",
      };
    }
    cell = expanded;
  }

  const callingCode = options.country ? getCountryCallingCode(options.country) : undefined;
  const compact = cell.replace(/[\s().\-/]/g, "");
  let international: PhoneNumber | undefined;
  let carriesCode = false;
  if (compact.startsWith("+") || compact.startsWith("00")) {
    carriesCode = true;
    international = parseInternational("+" + compact.replace(/^(\+|00)/, ""));
  } else if (callingCode === "1" && compact.startsWith("011")) {
    carriesCode = true;
    international = parseInternational("+" + compact.slice(3));
  } else if (/^\d+$/.test(compact) && callingCode && compact.startsWith(callingCode)) {
    international = parseInternational("+" + compact);
    carriesCode = international !== undefined;
  }

  if (carriesCode) {
    if (!international) return withExtension({ class: "invalid", reason: "not a valid phone number" });
    return withExtension(placeInCountry(international, options, false));
  }

  if (!options.country) {
    return withExtension({ class: "no_code", reason: "number has no country code and the task has no country" });
  }
  const national = parsePhoneNumberFromString(cell, { defaultCountry: options.country, extract: false });
  if (!national?.isValid()) return withExtension({ class: "invalid", reason: "not a valid phone number" });
  if (options.requireCountryCode) {
    return withExtension({
      class: "no_code",
      identifier: identifierOf(national),
      reason: "number is written without its country code",
    });
  }
  return withExtension(placeInCountry(national, options, true));
}

function placeInCountry(phone: PhoneNumber, options: ClassifyOptions, national: boolean): Classification {
  const identifier = identifierOf(phone);
  if (!options.country) return { class: "kept", identifier };
  if (phone.countryCallingCode !== getCountryCallingCode(options.country)) {
    return {
      class: "other_country",
      identifier,
      reason: `number belongs to +${phone.countryCallingCode}${phone.country ? ` (${phone.country})` : ""}, not ${options.country}`,
    };
  }
  const region = phone.country;
  if (region && region !== options.country) {
    if (options.strictRegion) {
      return { class: "other_country", identifier, reason: `number belongs to ${region}, not ${options.country}` };
    }
    return national ? { class: "kept", identifier, national, sharedRegion: region } : { class: "kept", identifier, sharedRegion: region };
  }
  return national ? { class: "kept", identifier, national } : { class: "kept", identifier };
}

/** True for an ISO 3166-1 alpha-2 code that libphonenumber-js knows. */
export function isKnownCountry(code: string): code is CountryCode {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

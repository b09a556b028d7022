/**
 * A plain reference for how bulkcheck reads a phone list, written from the rules of
 * issue 11 (docs/preparation.md) with libphonenumber-js/max and nothing of
 * src/prepare/. It is slow and simple on purpose: the differential tests hold
 * `validate` to it row by row (test/prepare/differential.test.ts,
 * bench/prepare-differential.js). It understands the ways the corpus writes numbers
 * (test/reference/number-corpus.js), not every oddity a real export holds.
 *
 * @typedef {{ country?: string, requireCountryCode?: boolean, strictRegion?: boolean, digitsAs?: "international" | "national" }} ReferenceOptions
 * @typedef {{ class: string, identifier?: string, vote?: "international" | "national", ambiguous?: boolean }} ReferenceCell
 */
import { getCountryCallingCode, parsePhoneNumberFromString } from "libphonenumber-js/max";
import metadata from "libphonenumber-js/metadata.max.json";

/** Rule: a cell longer than 100 characters once its edge spaces are trimmed is invalid, before anything else. */
const MAX_CELL_CHARS = 100;

/** @param {string} code  whether libphonenumber-js knows this calling code */
const isCallingCode = (code) => code in metadata.country_calling_codes;

/**
 * Rule: pre-cleaning. Full-width digits, surrounding quotes, a leading apostrophe,
 * `tel:`, a trailing `.0` and an extension go; spreadsheet notation is expanded only
 * when the mantissa holds exactly exponent + 1 digits; `(+CC)` and `(00CC)` before
 * the number carry a calling code.
 * @param {string} raw
 * @returns {{ digits: string, spreadsheet: boolean } | { class: string }}
 */
export function cleanCell(raw) {
  let text = raw.trim();
  if (text.length > MAX_CELL_CHARS) return { class: "invalid" };
  text = text.normalize("NFKC");
  const quoted = /^"(.*)"$/.exec(text) ?? /^'(.*)'$/.exec(text);
  if (quoted) text = quoted[1].trim();
  if (text.startsWith("'")) text = text.slice(1);
  if (/^tel:/i.test(text)) text = text.slice(4).trim();
  if (text.endsWith(".0")) text = text.slice(0, -2);
  const extension = /^(.+?)\s*(?:ext\.?|x|#)\s*\d{1,7}$/i.exec(text);
  if (extension) text = extension[1];
  if (text === "") return { class: "blank" };
  const scientific = /^(\d)\.(\d+)E\+(\d+)$/i.exec(text);
  if (scientific) {
    const digits = scientific[1] + scientific[2];
    return digits.length === Number(scientific[3]) + 1 ? { digits, spreadsheet: true } : { class: "invalid" };
  }
  const bracketed = /^\((?:\+|00)(\d{1,3})\)(.*)$/.exec(text);
  if (bracketed && isCallingCode(bracketed[1])) text = "+" + bracketed[1] + bracketed[2];
  const digits = text.replace(/[\s\-()./]/g, "");
  return /^\+?\d+$/.test(digits) ? { digits, spreadsheet: false } : { class: "invalid" };
}

/**
 * Rule: one cell for a task. `+` or the international prefix: the number carries
 * its code. The trunk prefix: national. Otherwise the cell is bare: national, and
 * when it starts with the calling code also `+` and the digits; see docs/preparation.md.
 * @param {string} raw
 * @param {ReferenceOptions} options
 * @returns {ReferenceCell}
 */
export function referenceCell(raw, options) {
  const cleaned = cleanCell(raw);
  if ("class" in cleaned) return cleaned;
  const { digits, spreadsheet } = cleaned;
  const country = options.country;
  if (digits.startsWith("+")) return placed(parse(digits), options, false);
  if (country === undefined) {
    if (digits.startsWith("00")) return placed(parse("+" + digits.slice(2)), options, false);
    if (digits.startsWith("0")) return { class: "no_code" };
    return placed(parse("+" + digits), options, false);
  }
  const plan = metadata.countries[country];
  const code = getCountryCallingCode(country);
  const trunk = typeof plan[5] === "string" && plan[5] !== "" ? plan[5] : undefined;
  const idd = new RegExp("^(?:" + plan[1] + ")").exec(digits);
  if (!spreadsheet) {
    if (idd && !digits.slice(idd[0].length).startsWith("0")) return placed(parse("+" + digits.slice(idd[0].length)), options, false);
    if (idd || (trunk !== undefined && digits.startsWith(trunk))) {
      // Rule: where the trunk prefix is the calling code (NANP's 1), a reading equal to
      // "+" and the digits is that number written with its code.
      const asNational = parse(digits, country);
      const withCode = digits.startsWith(code) ? parse("+" + digits) : undefined;
      if (asNational && withCode && asNational.number === withCode.number) return placed(withCode, options, false);
      return placed(asNational, options, true);
    }
  }
  if (!digits.startsWith(code)) return withVote(placed(parse(digits, country), options, true), "national");
  const withCode = parse("+" + digits);
  const national = parse("+" + code + digits);
  if (withCode && national) {
    if (withCode.number === national.number) return placed(withCode, options, false);
    const asNational = options.digitsAs === "national";
    return { ...placed(asNational ? national : withCode, options, asNational), ambiguous: true };
  }
  if (withCode) return withVote(placed(withCode, options, false), "international");
  if (national) return withVote(placed(national, options, true), "national");
  return { class: "invalid" };
}

/** @returns {import("libphonenumber-js").PhoneNumber | undefined} a valid number, else undefined */
function parse(text, defaultCountry) {
  const phone = parsePhoneNumberFromString(text, { defaultCountry, extract: false });
  return phone?.isValid() ? phone : undefined;
}

function withVote(cell, vote) {
  return cell.class === "invalid" ? cell : { ...cell, vote };
}

/**
 * Rule: a national reading is `no_code` under --require-country-code; a number of
 * another calling code is `other_country`, and so is a region sharing the task's
 * code (GG under +44) under --strict-region.
 * @returns {ReferenceCell}
 */
function placed(phone, options, national) {
  if (!phone) return { class: "invalid" };
  const identifier = phone.countryCallingCode + phone.nationalNumber;
  if (national && options.requireCountryCode) return { class: "no_code", identifier };
  if (options.country === undefined) return { class: "kept", identifier };
  if (phone.countryCallingCode !== getCountryCallingCode(options.country)) return { class: "other_country", identifier };
  if (options.strictRegion && phone.country !== undefined && phone.country !== options.country)
    return { class: "other_country", identifier };
  return { class: "kept", identifier };
}

/**
 * Rule: a whole list. Every bare cell valid in exactly one reading votes for it;
 * ambiguous cells are read as `digitsAs` says, else as the majority votes (a tie:
 * with the calling code). A kept identifier seen before is a duplicate.
 * @param {readonly string[]} cells
 * @param {ReferenceOptions} options
 */
export function referenceList(cells, options) {
  const votes = { international: 0, national: 0 };
  for (const cell of cells) {
    const vote = referenceCell(cell, options).vote;
    if (vote) votes[vote]++;
  }
  const digitsAs = options.digitsAs ?? (votes.national > votes.international ? "national" : "international");
  const seen = new Set();
  const rows = cells.map((cell) => {
    const row = referenceCell(cell, { ...options, digitsAs });
    if (row.class !== "kept") return row;
    if (seen.has(row.identifier)) return { ...row, class: "duplicate" };
    seen.add(row.identifier);
    return row;
  });
  return { rows, votes, digitsAs, ambiguous: rows.filter((row) => row.ambiguous).length };
}

import { UsageError } from "../errors.js";
import { REASONS, type Classification, type ClassifyOptions } from "./classification.js";
import {
  afterInternationalPrefix,
  callingCodeOf,
  parseDigits,
  startsWithInternationalPrefix,
  startsWithTrunkPrefix,
  type ParsedDigits,
} from "./digit-parser.js";

/**
 * Where a digit string came from: a cell of digits and number punctuation, the
 * expansion of spreadsheet notation (always bare: a spreadsheet keeps no `+` and
 * no leading 0), or the library's full parse of a cell holding more than that.
 */
export type DigitsSource = "cell" | "spreadsheet" | "parsed";

const INVALID: Classification = { class: "invalid", reason: REASONS.invalid };

/**
 * Classifies `+`/digits for a task.
 *
 * A leading `+`, or the task country's international prefix, carries a calling
 * code. A cell that starts with the trunk prefix (`0`; `1` in NANP) is a national
 * number. Anything else is *bare*: it reads nationally (the task's calling code,
 * then the digits), and when it starts with that calling code it may also read as
 * `+` and the digits. One valid reading decides, and is the list's evidence of
 * how it writes numbers (`vote`); two valid readings of the same number are that
 * number, written with its code; two different valid numbers are *ambiguous* and
 * read as `options.digitsAs` says (the caller decides from the votes).
 */
export function classifyDigits(digits: string, options: ClassifyOptions, source: DigitsSource): Classification {
  const country = options.country;
  const home = country === undefined ? undefined : callingCodeOrThrow(country);
  if (digits.startsWith("+")) return international(parseDigits(digits), options);
  if (country === undefined || home === undefined) {
    if (digits.startsWith("00")) return international(parseDigits("+" + digits.slice(2)), options);
    if (digits.startsWith("0")) return { class: "no_code", reason: REASONS.noCodeNoCountry };
    // The service's own identifiers are calling code + number without the plus.
    return international(parseDigits("+" + digits), options);
  }
  const bare =
    source === "spreadsheet" ||
    (source === "cell" && !startsWithTrunkPrefix(digits, country) && !startsWithInternationalPrefix(digits, country));
  if (!bare) {
    const afterPrefix = afterInternationalPrefix(digits, country);
    if (afterPrefix !== undefined) return international(parseDigits("+" + afterPrefix), options);
    return trunkOrCode(digits, home, options, country);
  }
  if (!digits.startsWith(home)) return withVote(national(parseDigits(digits, country), options), "national");
  // Written out as "+CC…" so that the library cannot read the calling code itself.
  const asNational = parseDigits("+" + home + digits);
  const withCode = parseDigits("+" + digits);
  if (withCode?.valid && asNational?.valid) {
    if (identifierOf(withCode) === identifierOf(asNational)) return place(withCode, options, false);
    const resolved = options.digitsAs === "national" ? national(asNational, options) : place(withCode, options, false);
    return { ...resolved, ambiguous: true };
  }
  if (withCode?.valid) return withVote(place(withCode, options, false), "international");
  if (asNational?.valid) return withVote(national(asNational, options), "national");
  return INVALID;
}

/**
 * A cell starting with the trunk prefix is national, except where the trunk prefix is
 * the calling code itself (NANP's `1`): `1 212 555 0142` then reads the same as
 * `+1 212 555 0142`, and two readings of the same number count as written with its
 * code — the service keeps such a line, so `--require-country-code` must too.
 */
function trunkOrCode(digits: string, home: string, options: ClassifyOptions, country: string): Classification {
  const asNational = parseDigits(digits, country);
  if (digits.startsWith(home) && asNational?.valid) {
    const withCode = parseDigits("+" + digits);
    if (withCode?.valid && identifierOf(withCode) === identifierOf(asNational)) return place(withCode, options, false);
  }
  return national(asNational, options);
}

/** `result` (a fresh object unless invalid) marked as a vote for `vote`. */
function withVote(result: Classification, vote: "international" | "national"): Classification {
  if (result.class !== "invalid") result.vote = vote;
  return result;
}

function international(phone: ParsedDigits | undefined, options: ClassifyOptions): Classification {
  return phone?.valid ? place(phone, options, false) : INVALID;
}

/** A number read nationally: `no_code` when the task requires the code, else placed and counted as normalised. */
function national(phone: ParsedDigits | undefined, options: ClassifyOptions): Classification {
  if (!phone?.valid) return INVALID;
  if (options.requireCountryCode) return { class: "no_code", identifier: identifierOf(phone), reason: REASONS.noCode };
  return place(phone, options, true);
}

function identifierOf(phone: ParsedDigits): string {
  return phone.callingCode + phone.nationalNumber;
}

/** Decides kept / other_country for a valid number. */
function place(phone: ParsedDigits, options: ClassifyOptions, national: boolean): Classification {
  const identifier = identifierOf(phone);
  const country = options.country;
  if (country === undefined) return { class: "kept", identifier };
  if (options.anyRegion) return national ? { class: "kept", identifier, national } : { class: "kept", identifier };
  const region = phone.country;
  if (phone.callingCode !== callingCodeOf(country)) {
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

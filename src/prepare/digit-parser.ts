import { callingCodePlans, countryPlan, type NumberingPlan } from "./numbering-plans.js";

/**
 * What libphonenumber-js makes of a digit string: `parsePhoneNumberFromString(input,
 * { defaultCountry, extract: false })` followed by `isValid()`, `.number`,
 * `.country` and `.countryCallingCode`.
 */
export interface ParsedDigits {
  valid: boolean;
  callingCode: string;
  nationalNumber: string;
  /** The region the library settles on; undefined when it cannot tell. */
  country: string | undefined;
}

const MAX_INPUT_LENGTH = 250;
const MIN_NATIONAL_LENGTH = 2;
const MAX_NATIONAL_LENGTH = 17;
const MAX_CALLING_CODE_LENGTH = 3;
const ZERO = 48;

/**
 * A re-statement of libphonenumber-js 1.13.16's `parse()` + `isValid()` for inputs
 * made only of ASCII digits with an optional leading `+` (the caller checks; any
 * other input gives a meaningless answer), over the same metadata with every
 * pattern compiled once: ~7× faster than the library (3M cases: 13 s against 96 s).
 *
 * Each step names the library function it mirrors, branch for branch, so a reader
 * can check it against `node_modules/libphonenumber-js/source`. Exactness is not
 * assumed: test/prepare/digit-parser.test.ts and bench/prepare-differential.js
 * compare it with the library over generated numbers across every country.
 * Returns undefined where the library returns undefined (not a number at all).
 */
export function parseDigits(input: string, defaultCountry?: string): ParsedDigits | undefined {
  if (input.length > MAX_INPUT_LENGTH) return undefined;
  // isViablePhoneNumber: two bare digits, or at least three digits after an optional `+`.
  if (input.length < (input.startsWith("+") ? 4 : 2)) return undefined;
  const defaultPlan = defaultCountry === undefined ? undefined : countryPlan(defaultCountry);

  // parsePhoneNumber → extractCountryCallingCode
  const extracted = extractCallingCode(input, defaultPlan);
  if (extracted === undefined || extracted.rest === "") return undefined;
  const { rest } = extracted;
  let callingCode: string;
  let plan: NumberingPlan;
  let country: string | undefined;
  if (extracted.callingCode !== undefined) {
    callingCode = extracted.callingCode;
    plan = callingCodePlans(Number(callingCode))!.main;
  } else if (defaultPlan !== undefined) {
    country = defaultCountry;
    plan = defaultPlan;
    callingCode = defaultPlan.callingCode;
  } else {
    return undefined;
  }

  const nationalNumber = extractNationalNumber(rest, plan);
  const exact = countryByCallingCode(callingCode, nationalNumber);
  if (nationalNumber.length < MIN_NATIONAL_LENGTH || nationalNumber.length > MAX_NATIONAL_LENGTH) return undefined;
  if (exact.validated) return { valid: true, callingCode, nationalNumber, country: exact.plan!.country };
  // PhoneNumber.isValid → isValidNumber: the exact country's plan, else the one already selected.
  const validationPlan = exact.plan ?? plan;
  country = exact.plan?.country ?? country;
  return { valid: isValidFor(nationalNumber, validationPlan), callingCode, nationalNumber, country };
}

/**
 * extractCountryCallingCode: `{ callingCode, rest }`, `{ rest }` for a national
 * number, undefined for a malformed international one.
 */
function extractCallingCode(input: string, defaultPlan: NumberingPlan | undefined): { callingCode?: string; rest: string } | undefined {
  let international = input;
  if (!input.startsWith("+")) {
    const withoutIdd = defaultPlan === undefined ? undefined : stripIddPrefix(input, defaultPlan);
    if (!withoutIdd || withoutIdd === input) {
      if (defaultPlan !== undefined) {
        const shorter = callingCodeWithoutPlus(input, defaultPlan);
        if (shorter !== undefined) return { callingCode: defaultPlan.callingCode, rest: shorter };
      }
      return { rest: input };
    }
    international = "+" + withoutIdd;
  }
  if (international.charCodeAt(1) === ZERO) return undefined;
  let code = 0;
  for (let end = 2; end - 1 <= MAX_CALLING_CODE_LENGTH && end <= international.length; end++) {
    code = code * 10 + international.charCodeAt(end - 1) - ZERO;
    if (callingCodePlans(code) !== undefined) return { callingCode: String(code), rest: international.slice(end) };
  }
  return undefined;
}

/** stripIddPrefix: the number after the default country's international prefix, if it starts with one. */
function stripIddPrefix(input: string, plan: NumberingPlan): string | undefined {
  const prefix = plan.idd.exec(input);
  if (prefix === null) return undefined;
  const stripped = input.slice(prefix[0].length);
  // No calling code starts with 0.
  return stripped.startsWith("0") ? undefined : stripped;
}

/** extractCountryCallingCodeFromInternationalNumberWithoutPlusSign: the rest when `input` is better read as CC + number. */
function callingCodeWithoutPlus(input: string, plan: NumberingPlan): string | undefined {
  if (!input.startsWith(plan.callingCode)) return undefined;
  const shorter = input.slice(plan.callingCode.length);
  const shorterNational = extractNationalNumber(shorter, plan);
  const national = extractNationalNumber(input, plan);
  const better =
    (!plan.nationalNumber.test(national) && plan.nationalNumber.test(shorterNational)) || checkNumberLength(national, plan) === "TOO_LONG";
  return better ? shorter : undefined;
}

/** extractNationalNumber: strips a national prefix (and carrier code) unless that makes the number worse. */
function extractNationalNumber(number: string, plan: NumberingPlan): string {
  const stripped = stripNationalPrefix(number, plan);
  if (stripped === number) return number;
  // shouldHaveExtractedNationalPrefix
  if (plan.nationalNumber.test(number) && !plan.nationalNumber.test(stripped)) return number;
  if (plan.possibleLengths) {
    const lengthPlan = countryByCallingCode(plan.callingCode, stripped).plan ?? plan;
    const verdict = checkNumberLength(stripped, lengthPlan);
    if (verdict === "TOO_SHORT" || verdict === "INVALID_LENGTH") return number;
  }
  return stripped;
}

/** extractNationalNumberFromPossiblyIncompleteNumber, national number only. */
function stripNationalPrefix(number: string, plan: NumberingPlan): string {
  const prefix = plan.nationalPrefixForParsing;
  if (number === "" || prefix === undefined) return number;
  const match = prefix.exec(number);
  if (!match) return number;
  const groups = match.length - 1;
  // The library looks at the last group only, and an empty capture counts as none.
  const captured = groups > 0 && Boolean(match[groups]);
  if (plan.nationalPrefixTransformRule !== undefined && captured) {
    return number.replace(prefix, plan.nationalPrefixTransformRule);
  }
  return number.slice(match[0].length);
}

type LengthVerdict = "IS_POSSIBLE" | "TOO_SHORT" | "TOO_LONG" | "INVALID_LENGTH";

/** checkNumberLength without a type. */
function checkNumberLength(nationalNumber: string, plan: NumberingPlan): LengthVerdict {
  const possible = plan.possibleLengths;
  if (!possible) return "IS_POSSIBLE";
  const length = nationalNumber.length;
  if (possible[0] === length) return "IS_POSSIBLE";
  if (possible[0]! > length) return "TOO_SHORT";
  if (possible[possible.length - 1]! < length) return "TOO_LONG";
  return possible.indexOf(length, 1) >= 0 ? "IS_POSSIBLE" : "INVALID_LENGTH";
}

interface ExactCountry {
  plan: NumberingPlan | undefined;
  /** The country was chosen by full validation against its own plan, so the number is valid there. */
  validated: boolean;
}

const NO_COUNTRY: ExactCountry = { plan: undefined, validated: false };
// parseDigits asks twice for the same number (while stripping the national prefix, then for the result).
let askedCallingCode = "";
let askedNationalNumber = "";
let lastAnswer = NO_COUNTRY;

/** getCountryByCallingCode → getCountryByNationalNumber: the first sharing country that claims the number. */
function countryByCallingCode(callingCode: string, nationalNumber: string): ExactCountry {
  if (askedCallingCode !== callingCode || askedNationalNumber !== nationalNumber) {
    lastAnswer = findCountry(callingCode, nationalNumber);
    askedCallingCode = callingCode;
    askedNationalNumber = nationalNumber;
  }
  return lastAnswer;
}

function findCountry(callingCode: string, nationalNumber: string): ExactCountry {
  const countries = callingCodePlans(Number(callingCode))?.countries;
  if (!countries) return NO_COUNTRY;
  if (countries.length === 1) return { plan: countries[0], validated: false };
  for (const plan of countries) {
    if (plan.leadingDigits) {
      if (nationalNumber !== "" && plan.leadingDigits.test(nationalNumber)) return { plan, validated: false };
    } else if (isValidFor(nationalNumber, plan)) {
      return { plan, validated: true };
    }
  }
  return NO_COUNTRY;
}

/** getNumberType(...) !== undefined, or the bare national pattern for a plan without type data (isValidNumber). */
function isValidFor(nationalNumber: string, plan: NumberingPlan): boolean {
  if (!plan.nationalNumber.test(nationalNumber)) return false;
  if (!plan.types) return true;
  const length = nationalNumber.length;
  for (const type of plan.types) {
    if (type.possibleLengths && !type.possibleLengths.includes(length)) continue;
    if (type.pattern.test(nationalNumber)) return true;
  }
  return false;
}

/**
 * The digits after `country`'s international dialling prefix (`00` in GB, `011`
 * in the US), as the library's `stripIddPrefix` finds it; undefined when there is none.
 */
export function afterInternationalPrefix(digits: string, country: string): string | undefined {
  const plan = countryPlan(country);
  return plan === undefined ? undefined : stripIddPrefix(digits, plan) || undefined;
}

/** Whether `digits` start with `country`'s trunk prefix (`0` in GB, `1` in NANP), per the metadata's `national_prefix`. */
export function startsWithTrunkPrefix(digits: string, country: string): boolean {
  const prefix = countryPlan(country)?.nationalPrefix;
  return prefix !== undefined && digits.startsWith(prefix);
}

/** Whether `digits` start with `country`'s international dialling prefix (its `international_prefix` pattern). */
export function startsWithInternationalPrefix(digits: string, country: string): boolean {
  return countryPlan(country)?.idd.test(digits) ?? false;
}

/** The calling code of a country the metadata knows (`44` for GB). */
export function callingCodeOf(country: string): string | undefined {
  return countryPlan(country)?.callingCode;
}

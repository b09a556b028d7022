import metadata from "libphonenumber-js/metadata.max.json";

/**
 * libphonenumber-js's own `max` metadata, with every pattern compiled once.
 *
 * The library rebuilds `new RegExp('^(?:' + pattern + ')$')` on every call (61% of
 * parse time, see shared/notes/phone-numbers.md). These are the same pattern
 * strings wrapped exactly as the library wraps them, so a test against one of
 * these RegExps answers what the library's test would.
 */
export interface NumberingPlan {
  /** ISO code; undefined for a non-geographic plan (+800, +882, …). */
  country: string | undefined;
  callingCode: string;
  /**
   * `^(?:international_prefix)`. The library tests `search(idd) === 0` and strips
   * `match(idd)[0]`; a leftmost match at 0 is exactly what the anchored form finds.
   */
  idd: RegExp;
  /** `^(?:national_number_pattern)$` */
  nationalNumber: RegExp;
  /** The trunk prefix dialled before a national number (`0` in GB, `1` in NANP, `8` in RU); undefined when none. */
  nationalPrefix: string | undefined;
  possibleLengths: readonly number[] | undefined;
  /** `^(?:national_prefix_for_parsing || national_prefix)`; undefined when the plan has neither. */
  nationalPrefixForParsing: RegExp | undefined;
  nationalPrefixTransformRule: string | undefined;
  /** `^(?:leading_digits)`: the library's `search(leadingDigits) === 0`, anchored for the same reason as `idd`. */
  leadingDigits: RegExp | undefined;
  /** The ten number types (fixed line … shared cost); undefined when the plan has no type data. */
  types: readonly NumberTypePattern[] | undefined;
}

export interface NumberTypePattern {
  /** `^(?:pattern)$` */
  pattern: RegExp;
  /** The type's own possible lengths, or the plan's when it has none. */
  possibleLengths: readonly number[] | undefined;
}

/** What the library knows about a calling code. */
export interface CallingCodePlans {
  /** The plan `selectNumberingPlan(callingCode)` picks: the main country's, or the non-geographic one. */
  main: NumberingPlan;
  /** The countries sharing the code, main first (getCountryCodesForCallingCode); undefined when non-geographic. */
  countries: readonly NumberingPlan[] | undefined;
}

type RawPlan = readonly unknown[];

const anchored = (pattern: string): RegExp => new RegExp("^(?:" + pattern + ")$");
const atStart = (pattern: string): RegExp => new RegExp("^(?:" + pattern + ")");
const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
const lengths = (value: unknown): readonly number[] | undefined => (Array.isArray(value) ? (value as number[]) : undefined);

/** Mirrors the library's `NumberingPlan` accessors for metadata format v4. */
function compilePlan(raw: RawPlan, country: string | undefined): NumberingPlan {
  const possibleLengths = lengths(raw[3]);
  const prefixForParsing = text(raw[7]) ?? text(raw[5]);
  const leading = text(raw[10]);
  const rawTypes: unknown = raw[11];
  let types: NumberTypePattern[] | undefined;
  if (Array.isArray(rawTypes) && rawTypes.length > 0) {
    types = [];
    // Validity asks whether any type matches, so order is free: mobile (index 1) first, as lists are mostly mobiles.
    const listed: readonly unknown[] = rawTypes;
    for (const type of [listed[1], listed[0], ...listed.slice(2)]) {
      // A missing type (0) or an empty pattern never matches, exactly as `isNumberTypeEqualTo` decides.
      if (!Array.isArray(type) || !text(type[0])) continue;
      types.push({ pattern: anchored(type[0] as string), possibleLengths: lengths(type[1]) ?? possibleLengths });
    }
  }
  return {
    country,
    callingCode: String(raw[0]),
    idd: atStart(String(raw[1])),
    nationalNumber: anchored(String(raw[2])),
    nationalPrefix: text(raw[5]),
    possibleLengths,
    nationalPrefixForParsing: prefixForParsing === undefined ? undefined : atStart(prefixForParsing),
    nationalPrefixTransformRule: text(raw[8]),
    leadingDigits: leading === undefined ? undefined : atStart(leading),
    types,
  };
}

const rawCountries = metadata.countries as Record<string, RawPlan | undefined>;
const countryPlans = new Map<string, NumberingPlan>();
// A list asks for its task country's plan several times per cell.
let lastPlan: NumberingPlan | undefined;

/** The plan of a country (ISO code), compiled on first use; undefined for an unknown country. */
export function countryPlan(country: string): NumberingPlan | undefined {
  if (lastPlan?.country === country) return lastPlan;
  let plan = countryPlans.get(country);
  if (plan === undefined) {
    const raw = rawCountries[country];
    if (!raw) return undefined;
    plan = compilePlan(raw, country);
    countryPlans.set(country, plan);
  }
  lastPlan = plan;
  return plan;
}

/**
 * Calling codes are 1–3 digits, so they index an array directly: no string
 * slicing or hashing while reading the code off the front of a number.
 */
const byCallingCode: Array<CallingCodePlans | undefined> = new Array<CallingCodePlans | undefined>(1000);
for (const [code, countries] of Object.entries(metadata.country_calling_codes as Record<string, readonly string[]>)) {
  // The library leaves a non-geographic entry ("001") out of the countries sharing a code.
  if (countries.length === 1 && countries[0]!.length === 3) continue;
  const plans = countries.map((country) => countryPlan(country)!);
  byCallingCode[Number(code)] = { main: plans[0]!, countries: plans };
}
for (const [code, raw] of Object.entries(metadata.nonGeographic as Record<string, RawPlan>)) {
  byCallingCode[Number(code)] ??= { main: compilePlan(raw, undefined), countries: undefined };
}

/** The plans of a calling code given as a number (44 for +44); undefined when the library knows no such code. */
export function callingCodePlans(callingCode: number): CallingCodePlans | undefined {
  return byCallingCode[callingCode];
}

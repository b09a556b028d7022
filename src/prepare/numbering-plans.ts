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
  callingCode: string;
  /** International dialling prefix, unanchored as in the library's `stripIddPrefix`. */
  idd: RegExp;
  /** `^(?:national_number_pattern)$` */
  nationalNumber: RegExp;
  possibleLengths: readonly number[] | undefined;
  /** `^(?:national_prefix_for_parsing || national_prefix)`; undefined when the plan has neither. */
  nationalPrefixForParsing: RegExp | undefined;
  nationalPrefixTransformRule: string | undefined;
  /** Unanchored, as the library's `search()` uses it. */
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

type RawPlan = readonly unknown[];

const anchored = (pattern: string): RegExp => new RegExp("^(?:" + pattern + ")$");
const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
const lengths = (value: unknown): readonly number[] | undefined => (Array.isArray(value) ? (value as number[]) : undefined);

/** Mirrors the library's `NumberingPlan` accessors for metadata format v4. */
function compilePlan(raw: RawPlan): NumberingPlan {
  const possibleLengths = lengths(raw[3]);
  const prefixForParsing = text(raw[7]) ?? text(raw[5]);
  const leading = text(raw[10]);
  const rawTypes = raw[11];
  let types: NumberTypePattern[] | undefined;
  if (Array.isArray(rawTypes) && rawTypes.length > 0) {
    types = [];
    // Validity asks whether any type matches, so order is free: mobile (index 1) first, as lists are mostly mobiles.
    for (const type of [rawTypes[1], rawTypes[0], ...rawTypes.slice(2)] as unknown[]) {
      // A missing type (0) or an empty pattern never matches, exactly as `isNumberTypeEqualTo` decides.
      if (!Array.isArray(type) || !text(type[0])) continue;
      types.push({ pattern: anchored(type[0] as string), possibleLengths: lengths(type[1]) ?? possibleLengths });
    }
  }
  return {
    callingCode: String(raw[0]),
    idd: new RegExp(String(raw[1])),
    nationalNumber: anchored(String(raw[2])),
    possibleLengths,
    nationalPrefixForParsing: prefixForParsing === undefined ? undefined : new RegExp("^(?:" + prefixForParsing + ")"),
    nationalPrefixTransformRule: text(raw[8]),
    leadingDigits: leading === undefined ? undefined : new RegExp(leading),
    types,
  };
}

const rawCountries = metadata.countries as Record<string, RawPlan | undefined>;
const rawNonGeographic = metadata.nonGeographic as Record<string, RawPlan | undefined>;
const countryPlans = new Map<string, NumberingPlan>();
const callingCodePlans = new Map<string, NumberingPlan>();
/** Calling code → sharing countries, main first; non-geographic codes ("001") left out, as the library does. */
const countriesByCallingCode = new Map<string, readonly string[]>(
  Object.entries(metadata.country_calling_codes as Record<string, readonly string[]>).filter(
    ([, countries]) => !(countries.length === 1 && countries[0]!.length === 3),
  ),
);

/** The plan of a country (ISO code), compiled on first use; undefined for an unknown country. */
export function countryPlan(country: string): NumberingPlan | undefined {
  let plan = countryPlans.get(country);
  if (plan === undefined) {
    const raw = rawCountries[country];
    if (!raw) return undefined;
    plan = compilePlan(raw);
    countryPlans.set(country, plan);
  }
  return plan;
}

/**
 * The countries sharing a calling code, main country first, as the library's
 * `getCountryCodesForCallingCode` returns them; undefined for unknown and non-geographic codes.
 */
export function countriesForCallingCode(callingCode: string): readonly string[] | undefined {
  return countriesByCallingCode.get(callingCode);
}

/** The plan the library selects for a bare calling code: its main country's, or the non-geographic one. */
export function callingCodePlan(callingCode: string): NumberingPlan | undefined {
  let plan = callingCodePlans.get(callingCode);
  if (plan === undefined) {
    const main = countriesByCallingCode.get(callingCode)?.[0];
    const raw = main === undefined ? rawNonGeographic[callingCode] : undefined;
    plan = main !== undefined ? countryPlan(main) : raw ? compilePlan(raw) : undefined;
    if (plan === undefined) return undefined;
    callingCodePlans.set(callingCode, plan);
  }
  return plan;
}

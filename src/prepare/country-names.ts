import metadata from "libphonenumber-js/metadata.max.json";
import { closestMatch, normalised } from "../did-you-mean.js";
import { callingCodePlans } from "./numbering-plans.js";

/**
 * What people type for a country that is not its ISO 3166-1 alpha-2 code, and the code
 * they mean: the United Kingdom's own abbreviation (not ISO's, which is GB), the EU's code
 * for Greece, and names that are not a country's English name.
 */
const ALIASES: Readonly<Record<string, string>> = {
  uk: "GB",
  el: "GR",
  england: "GB",
  scotland: "GB",
  wales: "GB",
  northern_ireland: "GB",
  great_britain: "GB",
  britain: "GB",
  usa: "US",
  america: "US",
  holland: "NL",
  uae: "AE",
};

/**
 * The ISO code a user probably meant by a `--country` value that is not one: `UK` → GB,
 * a country's English name in any case (`germany` → DE), a near miss of a name
 * (`Germny`), or a calling code (`+44`, `44` → GB, its main country). Undefined when
 * nothing fits.
 */
export function suggestCountry(input: string): string | undefined {
  const typed = normalised(input);
  const alias = ALIASES[typed];
  if (alias !== undefined) return alias;
  const callingCode = /^(?:\+|00)?(\d{1,3})$/.exec(input.trim())?.[1];
  if (callingCode !== undefined) return callingCodePlans(Number(callingCode))?.countries?.[0]?.country;
  if (typed.length <= 2) return undefined;
  const byName = countryNames();
  const name = closestMatch(typed, [...byName.keys()]);
  return name === undefined ? undefined : byName.get(name);
}

let names: Map<string, string> | undefined;

/** Every country the metadata knows, by its English name (normalised); built on first use. */
function countryNames(): Map<string, string> {
  if (names) return names;
  const display = new Intl.DisplayNames(["en"], { type: "region" });
  names = new Map();
  for (const code of Object.keys(metadata.countries)) {
    const name = display.of(code);
    if (name !== undefined && name !== code) names.set(normalised(name), code);
  }
  return names;
}

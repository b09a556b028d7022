import type { CountryCode } from "libphonenumber-js/max";
import { UsageError } from "../../../errors.js";
import { isCarrierProduct, type ServiceType } from "../../../spec/products.js";
import { countryCode, countryFromFlag } from "./preparation.js";

/** The country flags of a command that prepares a list. */
export interface CountryFlags {
  country?: string;
  /** With `--country auto`: the country of the numbers written nationally. */
  defaultCountry?: string;
}

/** The list's country, or (anyRegion) every country, with `country` the one national numbers are read in. */
export interface CountryChoice {
  country: CountryCode | undefined;
  anyRegion: boolean;
}

/**
 * `--country CC`, or `--country auto` for a list of every country (one task per
 * country), with `--default-country CC` to read the numbers written nationally (else
 * they are `no_code`). carrier_batch takes every country without --country, so
 * `--country auto` is a usage error there, as is `--default-country` without auto.
 */
export function countryChoice(flags: CountryFlags, product: ServiceType | undefined): CountryChoice {
  if (flags.country?.trim().toLowerCase() !== "auto") {
    if (flags.defaultCountry !== undefined) {
      throw new UsageError("--default-country goes with --country auto.", {
        hint: "With one country, --country CC already reads numbers written nationally as CC's.",
      });
    }
    return { country: countryFromFlag(flags.country, product), anyRegion: false };
  }
  if (product && isCarrierProduct(product)) {
    throw new UsageError(`--country auto is for the signal products: ${product} already takes numbers of every country.`, {
      hint: `Leave --country out for ${product}; numbers must then carry their country code.`,
    });
  }
  if (flags.defaultCountry === undefined) return { country: undefined, anyRegion: true };
  return { country: countryCode("--default-country", flags.defaultCountry), anyRegion: true };
}

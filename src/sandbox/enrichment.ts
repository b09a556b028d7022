import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { prefixTable, type PlaceSeparator } from "./geo-data.js";

/**
 * Values of the carrier product, as real as offline data allows:
 * - number_type: libphonenumber-js `getType()` lower-cased (mobile, fixed_line,
 *   fixed_line_or_mobile, toll_free, voip, ...); empty when unknown.
 * - country_code: the number's region (GB, GG, US ...), empty for non-geographic codes.
 * - carrier: the original range holder from Google's carrier data, looked up for
 *   mobile-like types only (as Google's carrier mapper does); it does not follow porting.
 * - underlying_carrier: the data knows one operator per range, so it repeats carrier
 *   (empty when carrier is empty).
 * - region/city: Google's geocoding data, looked up for fixed lines, and for mobiles only
 *   where mobile ranges are geographic (AR, BR, CN, ID, MX), as Google's geocoder does.
 *   See `splitPlace` for how a description becomes region and city.
 */

const MOBILE_LIKE = new Set(["MOBILE", "FIXED_LINE_OR_MOBILE", "PAGER"]);
const FIXED_LIKE = new Set(["FIXED_LINE", "FIXED_LINE_OR_MOBILE"]);
const GEOGRAPHIC_MOBILE_CODES = new Set(["52", "54", "55", "62", "86"]);

/**
 * Splits a place description. Where most of a country's descriptions read
 * "City, Region" (US, IN, CN, JP ...) or "City - Region" (BR), the text after the
 * last separator is the region and the rest the city, and a lone name is a region
 * (a coarser prefix: "New Jersey", "São Paulo"). Elsewhere (GB, DE ...) the data
 * lists towns, so the whole description is the city and region stays empty.
 */
export function splitPlace(place: string, separator: PlaceSeparator): { region: string; city: string } {
  if (!separator) return { region: "", city: place };
  const at = place.lastIndexOf(separator);
  if (at < 0) return { region: place, city: "" };
  return { region: place.slice(at + separator.length), city: place.slice(0, at) };
}

/** carrier, underlying_carrier, number_type, country_code, region, city for an identifier (digits with country code). */
export function carrierColumns(identifier: string): readonly string[] {
  const phone = parsePhoneNumberFromString(`+${identifier}`);
  if (!phone) return ["", "", "", "", "", ""];
  const type = phone.getType();
  const code = phone.countryCallingCode;
  const national = phone.nationalNumber;
  const carrier = type && MOBILE_LIKE.has(type) ? (prefixTable("carrier", code).lookup(national) ?? "") : "";
  let place = { region: "", city: "" };
  if (type && (FIXED_LIKE.has(type) || (type === "MOBILE" && GEOGRAPHIC_MOBILE_CODES.has(code)))) {
    const geocodes = prefixTable("geocodes", code);
    const description = geocodes.lookup(national);
    if (description) place = splitPlace(description, geocodes.separator);
  }
  return [carrier, carrier, type ? type.toLowerCase() : "", phone.country ?? "", place.region, place.city];
}

/**
 * A phone list per task country, generated from libphonenumber-js's example numbers
 * and written the ways people write numbers: E.164, a `00` prefix, national with and
 * without the trunk prefix, bare digits with the calling code, spaces, dashes and
 * brackets, `(+CC)` and `(00CC)`, `tel:`, extensions, spreadsheet notation (whole and
 * with lost digits), quotes, an apostrophe, full-width digits, a float's `.0`; plus
 * numbers of another country, repeats, junk, an overlong cell, and bare digit strings
 * valid both ways. Half the lists lean towards bare national cells, half towards bare
 * cells with the calling code, so both conventions decide somewhere (DE and SE).
 *
 * Used by test/prepare/differential.test.ts and bench/prepare-differential.js.
 */
import { getCountryCallingCode, parsePhoneNumberFromString } from "libphonenumber-js/max";
import examples from "libphonenumber-js/examples.mobile.json";
import metadata from "libphonenumber-js/metadata.max.json";

export const CORPUS_COUNTRIES = [
  ...["GB", "US", "CA", "DE", "FR", "IT", "ES", "NL", "BE", "AT", "CH", "PL", "SE", "NO", "DK", "FI", "PT", "IE", "HU", "CZ"],
  ...["RU", "KZ", "UA", "TR", "IL", "AE", "BR", "AR", "MX", "CO", "CL", "IN", "CN", "JP", "AU", "NZ", "ZA", "NG", "SG", "MY"],
  ...["ID", "PH", "GG", "JE"],
];

const FULL_WIDTH_OFFSET = 0xff10 - 0x30;
const fullWidth = (text) => text.replace(/[0-9+]/g, (c) => (c === "+" ? "＋" : String.fromCharCode(c.charCodeAt(0) + FULL_WIDTH_OFFSET)));
const spaced = (digits) => digits.replace(/(\d{3})(?=\d{2})/g, "$1 ");
/** `digits` as a spreadsheet shows a number too long for its column: every digit, or only the first seven. */
const scientific = (digits, keep = digits.length) => `${digits[0]}.${digits.slice(1, keep)}E+${digits.length - 1}`;

/** The example number with its last digit changed `n` ways: numbers of the same shape, mostly valid. */
function variants(nsn, n) {
  return Array.from({ length: n }, (_, i) => nsn.slice(0, -1) + String((Number(nsn.at(-1)) + i + 1) % 10));
}

/**
 * Bare digit strings valid both as `+` and the digits and as a national number of
 * `country`, two different numbers: the calling code followed by a national number
 * that itself starts with the calling code's digits, found by trying the example's
 * tails behind it.
 */
function ambiguousCells(country, code, nsn) {
  const found = [];
  for (let cut = 1; cut < nsn.length - 3 && found.length < 2; cut++) {
    const digits = code + code + nsn.slice(cut);
    const withCode = parsePhoneNumberFromString("+" + digits);
    const national = parsePhoneNumberFromString("+" + code + digits);
    if (withCode?.isValid() && national?.isValid() && withCode.number !== national.number) found.push(digits);
  }
  return found;
}

/**
 * The cells of one country's list, in order (no header).
 * @param {string} country
 * @param {number} index  its place in CORPUS_COUNTRIES: odd lists lean national, even ones international
 * @returns {string[]}
 */
export function corpusCells(country, index) {
  const nsn = examples[country];
  const code = getCountryCallingCode(country);
  const trunk = typeof metadata.countries[country][5] === "string" ? metadata.countries[country][5] : "";
  const other = country === "FR" ? ["+49 151 23456789"] : ["+33 6 12 34 56 78"];
  const cells = [
    `+${code}${nsn}`,
    `+${code} ${spaced(nsn)}`,
    `00${code}${nsn}`,
    `00 ${code} ${spaced(nsn)}`,
    `${trunk}${nsn}`,
    `${trunk}${nsn.slice(0, 3)}-${nsn.slice(3)}`,
    `(${trunk}${nsn.slice(0, 3)}) ${nsn.slice(3)}`,
    nsn,
    `${code}${nsn}`,
    `${code} ${spaced(nsn)}`,
    `(+${code}) ${spaced(nsn)}`,
    `(00${code}) ${nsn}`,
    `tel:+${code}${nsn}`,
    `+${code} ${nsn} x12`,
    `${trunk}${nsn} ext. 7`,
    `+${code}${nsn}#99`,
    scientific(code + nsn),
    scientific(code + nsn, 7),
    `"+${code} ${nsn}"`,
    `'+${code}${nsn}`,
    `'${trunk}${nsn}`,
    fullWidth(`+${code} ${nsn}`),
    `${code}${nsn}.0`,
    `+${code}${nsn.slice(0, -3)}`,
    ...other,
    "n/a",
    "",
    "0".repeat(101),
    `+${code}${nsn}`,
    ...ambiguousCells(country, code, nsn),
    ...(index % 2 === 1 ? variants(nsn, 4) : variants(nsn, 8).map((v) => code + v)),
  ];
  return cells;
}

/** A list for a task without a country (carrier_batch): every country's example, with and without its code. */
export function corpusCellsWithoutCountry() {
  return CORPUS_COUNTRIES.flatMap((country) => {
    const code = getCountryCallingCode(country);
    const nsn = examples[country];
    return [`+${code} ${nsn}`, `${code}${nsn}`, `00${code}${nsn}`, `0${nsn}`, scientific(code + nsn)];
  });
}

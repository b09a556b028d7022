#!/usr/bin/env node
/**
 * Differential check of the preparation fast path (dist/prepare/digit-parser.js)
 * against libphonenumber-js itself, over millions of generated numbers across
 * every country (bench/gen-differential-cases.js). Prints a JSON summary; exits
 * with status 1 on any disagreement.
 *
 * Usage: node bench/prepare-differential.js [cases=3000000] [seed=1]
 * Env:   BULKCHECK_DIST  compiled library (default ../dist), e.g. /tmp/prep-dist
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { differentialCases } from "./gen-differential-cases.js";

const dist = resolve(process.env.BULKCHECK_DIST ?? join(import.meta.dirname, "..", "dist"));
const { parseDigits } = await import(pathToFileURL(join(dist, "prepare", "digit-parser.js")).href);
const { mulberry32 } = await import(pathToFileURL(join(dist, "sandbox", "random.js")).href);
const count = Number(process.argv[2] ?? 3_000_000);
const seed = Number(process.argv[3] ?? 1);

const figures = { cases: 0, library_valid: 0, library_undefined: 0, countries: new Set(), mismatches: 0, library_ms: 0, fast_path_ms: 0 };
const examples = [];
for (const c of differentialCases(count, mulberry32(seed))) {
  let started = performance.now();
  const phone = parsePhoneNumberFromString(c.input, { defaultCountry: c.defaultCountry, extract: false });
  const theirs = phone && {
    valid: phone.isValid(),
    callingCode: phone.countryCallingCode,
    nationalNumber: phone.nationalNumber,
    country: phone.country,
  };
  figures.library_ms += performance.now() - started;
  started = performance.now();
  const ours = parseDigits(c.input, c.defaultCountry);
  figures.fast_path_ms += performance.now() - started;
  figures.cases++;
  if (!theirs) figures.library_undefined++;
  else if (theirs.valid) {
    figures.library_valid++;
    if (theirs.country) figures.countries.add(theirs.country);
  }
  if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
    figures.mismatches++;
    if (examples.length < 20) examples.push({ ...c, ours, theirs });
  }
}
console.log(
  JSON.stringify(
    {
      ...figures,
      countries: figures.countries.size,
      library_ms: Math.round(figures.library_ms),
      fast_path_ms: Math.round(figures.fast_path_ms),
      examples,
    },
    null,
    2,
  ),
);
process.exitCode = figures.mismatches === 0 ? 0 : 1;

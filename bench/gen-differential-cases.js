/**
 * Generates inputs for the differential test of src/prepare/digit-parser.ts against
 * libphonenumber-js: ASCII digit strings with an optional leading "+", in every
 * shape a list holds, for every country of the metadata, with a default country
 * that is usually the number's own, sometimes another, sometimes none.
 *
 * Numbers start from the library's example numbers and from random digits of each
 * plan's possible lengths, so both valid numbers and near-misses are common. Used
 * by test/prepare/digit-parser.test.ts (a few hundred thousand cases) and
 * bench/prepare-differential.js (millions). Deterministic for a given seeded
 * `random` (both pass mulberry32 from src/sandbox/random.ts).
 *
 * @typedef {{ input: string, defaultCountry: string | undefined }} DifferentialCase
 */
import examples from "libphonenumber-js/examples.mobile.json";
import metadata from "libphonenumber-js/metadata.max.json";

const countries = Object.keys(metadata.countries);
const nonGeographic = Object.keys(metadata.nonGeographic);

/**
 * @param {number} count
 * @param {() => number} random  a seeded generator of numbers in [0, 1)
 * @returns {Generator<DifferentialCase>}
 */
export function* differentialCases(count, random) {
  const int = (n) => Math.floor(random() * n);
  const pick = (list) => list[int(list.length)];
  const digits = (n) => {
    let s = "";
    for (let i = 0; i < n; i++) s += String(int(10));
    return s;
  };
  for (let i = 0; i < count; i++) {
    const nonGeo = random() < 0.02;
    const country = nonGeo ? undefined : pick(countries);
    const plan = nonGeo ? metadata.nonGeographic[pick(nonGeographic)] : metadata.countries[country];
    const callingCode = plan[0];
    const lengths = Array.isArray(plan[3]) ? plan[3] : [8, 9, 10];
    const example = country === undefined ? undefined : examples[country];
    const nationalPrefix = typeof plan[5] === "string" ? plan[5] : "0";

    // The national significant number: an example with its tail changed, or random digits of a possible length.
    let nsn;
    const shape = random();
    if (example && shape < 0.45) nsn = example.slice(0, Math.max(1, example.length - 1 - int(5))) + digits(1 + int(5));
    else if (example && shape < 0.55) nsn = example;
    else if (shape < 0.85) nsn = digits(pick(lengths));
    else nsn = digits(1 + int(18));
    if (random() < 0.05) nsn = nsn.slice(0, -1 - int(3)) || nsn;

    const form = random();
    let input;
    if (form < 0.3) input = "+" + callingCode + nsn;
    else if (form < 0.45) input = nationalPrefix + nsn;
    else if (form < 0.55) input = nsn;
    else if (form < 0.63) input = "00" + callingCode + nsn;
    else if (form < 0.68) input = pick(["011", "0011", "010", "810", "001"]) + callingCode + nsn;
    else if (form < 0.78) input = callingCode + nsn;
    else if (form < 0.82) input = "+" + callingCode + nationalPrefix + nsn;
    else if (form < 0.86) input = "+" + digits(int(16));
    else if (form < 0.9) input = "+0" + digits(int(12));
    else input = digits(1 + int(20));
    if (input === "" || input === "+") input = "+1";

    const who = random();
    const defaultCountry = who < 0.75 ? country : who < 0.9 ? pick(countries) : undefined;
    yield { input, defaultCountry };
  }
}

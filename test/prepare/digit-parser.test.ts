import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";
import { describe, expect, it } from "vitest";
import { parseDigits, type ParsedDigits } from "../../src/prepare/digit-parser.js";
import { mulberry32 } from "../../src/sandbox/random.js";

type DifferentialCase = { input: string; defaultCountry: string | undefined };
type Generator = { differentialCases: (count: number, random: () => number) => Iterable<DifferentialCase> };

const generator = (await import(new URL("../../bench/gen-differential-cases.js", import.meta.url).href)) as Generator;

/** What the library says, in parseDigits' shape. */
function library({ input, defaultCountry }: DifferentialCase): ParsedDigits | undefined {
  const phone = parsePhoneNumberFromString(input, { defaultCountry: defaultCountry as CountryCode | undefined, extract: false });
  if (!phone) return undefined;
  return { valid: phone.isValid(), callingCode: phone.countryCallingCode, nationalNumber: phone.nationalNumber, country: phone.country };
}

describe("parseDigits (the fast path) against libphonenumber-js", () => {
  it.each([
    ["+447400123456", undefined],
    ["07400123456", "GB"],
    ["447400123456", "GB"],
    ["00447400123456", "GB"],
    ["+4407400123456", undefined],
    ["+447911123456", undefined],
    ["+441534456789", undefined],
    ["12125550100", "GB"],
    ["12125550142", "US"],
    ["01144740012345", "US"],
    ["88005553535", "RU"],
    ["0111523456789", "AR"],
    ["+8001234567", undefined],
    ["+0123", undefined],
    ["+12", undefined],
    ["1", "GB"],
  ])("agrees on %s (default %s)", (input, defaultCountry) => {
    expect(parseDigits(input, defaultCountry)).toEqual(library({ input, defaultCountry }));
  });

  // 300,000 generated numbers across every country, in every shape a list holds; bench/prepare-differential.js runs millions.
  it.each([1, 2, 3])("agrees on 100,000 generated numbers across all countries (seed %i)", (seed) => {
    const mismatches: Array<{ input: string; defaultCountry: string | undefined; ours: unknown; theirs: unknown }> = [];
    let valid = 0;
    for (const c of generator.differentialCases(100_000, mulberry32(seed))) {
      const theirs = library(c);
      const ours = parseDigits(c.input, c.defaultCountry);
      if (theirs?.valid) valid++;
      if (JSON.stringify(ours) !== JSON.stringify(theirs) && mismatches.length < 5) mismatches.push({ ...c, ours, theirs });
    }
    expect(mismatches).toEqual([]);
    // The generator must reach valid numbers often enough for the comparison to mean something.
    expect(valid).toBeGreaterThan(10_000);
  });
});

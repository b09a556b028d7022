import type { CountryCode } from "libphonenumber-js/max";
import { describe, expect, it } from "vitest";
import { classifyCell, REASONS, type ClassifyOptions } from "../../src/prepare/classify.js";
import { UsageError } from "../../src/errors.js";

const GB: ClassifyOptions = { country: "GB" };

describe("classifyCell for a GB task", () => {
  it.each([
    // kept, international
    ["+44 7400 123456", "447400123456"],
    ["+447500123456", "447500123456"],
    ["0044 7800 123456", "447800123456"],
    ["+44 (0)7400 123456", "447400123456"],
    ["+44-7400-123-456", "447400123456"],
    ["(+44) 7400 123456", "447400123456"],
    ["+44 20 7946 0123", "442079460123"],
    ["'+447400123456", "447400123456"],
    ['"+447400123456"', "447400123456"],
    ["tel:+447400123456", "447400123456"],
    ["＋４４ ７４００ １２３４５６", "447400123456"],
  ])("keeps %j as %s", (cell, identifier) => {
    expect(classifyCell(cell, GB)).toEqual({ class: "kept", identifier });
  });

  it.each([
    ["447400123456", {}],
    ["447400123456.0", {}],
    ["4.47400123456E+11", { spreadsheetExpanded: true }],
  ])("keeps the bare digits %j read with their calling code, the only valid reading, as a vote for it", (cell, more) => {
    expect(classifyCell(cell, GB)).toEqual({ class: "kept", identifier: "447400123456", vote: "international", ...more });
  });

  it.each([
    ["07400 123456", "447400123456"],
    ["07400123456", "447400123456"],
    ["(07400) 123456", "447400123456"],
    ["020 7946 0123", "442079460123"],
    ["07400.123.456", "447400123456"],
  ])("normalises national %j with GB's code to %s", (cell, identifier) => {
    expect(classifyCell(cell, GB)).toEqual({ class: "kept", identifier, national: true });
  });

  it.each([
    ["+44 7400 123456 x12", "12"],
    ["07400 123456 ext. 99", "99"],
    ["+447400123456#7", "7"],
  ])("drops the extension of %j and notes %s", (cell, extension) => {
    expect(classifyCell(cell, GB)).toMatchObject({ class: "kept", identifier: "447400123456", extension });
  });

  it.each([
    ["", REASONS.blank],
    ["   ", REASONS.blank],
    ['""', REASONS.blank],
    ["\u00a0", REASONS.blank],
  ])("classes %j as blank", (cell, reason) => {
    expect(classifyCell(cell, GB)).toEqual({ class: "blank", reason });
  });

  it.each([
    ["12345", REASONS.invalid],
    ["07400 12345", REASONS.invalid],
    ["+44 7700 900123", REASONS.invalid],
    ["0000000000", REASONS.invalid],
    ["12125550100", REASONS.invalid],
    ["447400123456.5", REASONS.invalid],
    ["n/a", REASONS.notANumber],
    ["call me", REASONS.notANumber],
    ["0800 FLOWERS", REASONS.notANumber],
    ["+44 7400 123456 (mobile)", REASONS.notANumber],
    ["4.47911E+11", REASONS.scientific],
    ["4.474E+11", REASONS.scientific],
  ])("classes %j as invalid: %s", (cell, reason) => {
    expect(classifyCell(cell, GB)).toEqual({ class: "invalid", reason });
  });

  it.each([
    ["+1 212 555 0142", "12125550142", "number belongs to +1 (US), not GB"],
    ["+33 6 12 34 56 78", "33612345678", "number belongs to +33 (FR), not GB"],
    ["0049 151 12345678", "4915112345678", "number belongs to +49 (DE), not GB"],
    ["+353 85 123 4567", "353851234567", "number belongs to +353 (IE), not GB"],
  ])("classes %j as other_country", (cell, identifier, reason) => {
    expect(classifyCell(cell, GB)).toEqual({ class: "other_country", identifier, reason });
  });

  it.each([
    ["+44 1534 456789", "441534456789", "JE", undefined],
    ["+44 7624 123456", "447624123456", "IM", undefined],
    ["07911 123456", "447911123456", "GG", true],
    ["01481 256789", "441481256789", "GG", true],
  ])("keeps %j from %s's shared-code region and names it", (cell, identifier, region, national) => {
    expect(classifyCell(cell, GB)).toEqual({ class: "kept", identifier, sharedRegion: region, ...(national ? { national } : {}) });
  });

  it.each([
    ["+44 1534 456789", "JE"],
    ["07624 123456", "IM"],
    ["+44 7911 123456", "GG"],
  ])("classes %j as other_country (%s) with strictRegion", (cell, region) => {
    expect(classifyCell(cell, { ...GB, strictRegion: true })).toMatchObject({
      class: "other_country",
      reason: `number belongs to ${region}, which shares +44 with GB`,
    });
  });

  it.each([
    ["07400 123456", "no_code"],
    ["020 7946 0123", "no_code"],
    ["+44 7400 123456", "kept"],
    ["447400123456", "kept"],
    ["0044 7400 123456", "kept"],
    ["12345", "invalid"],
  ])("classes %j as %s with requireCountryCode (the service's rule)", (cell, expected) => {
    const result = classifyCell(cell, { ...GB, requireCountryCode: true });
    expect(result.class).toBe(expected);
    if (expected === "no_code") expect(result).toMatchObject({ reason: REASONS.noCode, identifier: expect.stringMatching(/^44\d+$/) });
  });
});

describe("classifyCell for other task countries", () => {
  it.each([
    ["US", "(212) 555-0142", "kept", "12125550142"],
    ["US", "1 212 555 0142", "kept", "12125550142"],
    ["US", "011 44 7400 123456", "other_country", "447400123456"],
    ["US", "+1 416 555 0142", "kept", "14165550142"],
    ["CA", "+1 212 555 0142", "kept", "12125550142"],
    ["DE", "0151 12345678", "kept", "4915112345678"],
    ["DE", "0049 30 12345678", "kept", "493012345678"],
    ["FR", "06 12 34 56 78", "kept", "33612345678"],
    ["IN", "98765 43210", "kept", "919876543210"],
    ["KZ", "+7 701 123 4567", "kept", "77011234567"],
  ])("%s: classes %j as %s %s", (country, cell, expected, identifier) => {
    expect(classifyCell(cell, { country: country as CountryCode })).toMatchObject({ class: expected, identifier });
  });

  it("keeps a Canadian number in a US task as a shared-code region, and excludes it with strictRegion", () => {
    expect(classifyCell("+1 416 555 0142", { country: "US" })).toMatchObject({ class: "kept", sharedRegion: "CA" });
    expect(classifyCell("+1 416 555 0142", { country: "US", strictRegion: true }).class).toBe("other_country");
  });

  it("rejects an unknown task country with a UsageError", () => {
    expect(() => classifyCell("+447400123456", { country: "XX" as CountryCode })).toThrow(UsageError);
  });
});

describe("classifyCell without a task country (carrier product)", () => {
  it.each([
    ["+44 7400 123456", "kept", "447400123456"],
    ["447400123456", "kept", "447400123456"],
    ["0044 7400 123456", "kept", "447400123456"],
    ["+1 212 555 0142", "kept", "12125550142"],
    ["4915112345678", "kept", "4915112345678"],
    ["07400 123456", "no_code", undefined],
    ["7400123456", "invalid", undefined],
  ])("classes %j as %s", (cell, expected, identifier) => {
    const result = classifyCell(cell, {});
    expect(result.class).toBe(expected);
    expect(result.identifier).toBe(identifier);
    if (expected === "no_code") expect(result.reason).toBe(REASONS.noCodeNoCountry);
  });
});

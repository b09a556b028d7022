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

describe("classifyCell on bare digit strings (no +, no trunk or international prefix)", () => {
  const DE: ClassifyOptions = { country: "DE" };

  it("reads 4921 12345 in a DE task as +49 211 2345 by default and as 04921 12345 nationally, marking it ambiguous", () => {
    expect(classifyCell("4921 12345", DE)).toEqual({ class: "kept", identifier: "492112345", ambiguous: true });
    expect(classifyCell("4921 12345", { ...DE, digitsAs: "national" })).toEqual({
      class: "kept",
      identifier: "49492112345",
      national: true,
      ambiguous: true,
    });
  });

  it("classes an ambiguous cell read nationally as no_code under requireCountryCode, and with its code as kept", () => {
    expect(classifyCell("4921 12345", { ...DE, requireCountryCode: true, digitsAs: "national" })).toMatchObject({
      class: "no_code",
      identifier: "49492112345",
      ambiguous: true,
    });
    expect(classifyCell("4921 12345", { ...DE, requireCountryCode: true })).toMatchObject({ class: "kept", ambiguous: true });
  });

  it.each([
    ["DE", "15123456789", "4915123456789", "national"],
    ["GB", "7400 123456", "447400123456", "national"],
    ["GB", "447400123456", "447400123456", "international"],
    ["BR", "5511987654321", "5511987654321", "international"],
    ["IT", "393123456789", "393123456789", "international"],
    ["IT", "3123456789", "393123456789", "national"],
  ])("%s: reads %j, valid one way only, as %s and counts it as a vote for %s", (country, cell, identifier, vote) => {
    const result = classifyCell(cell, { country: country as CountryCode });
    expect(result).toMatchObject({ class: "kept", identifier, vote });
    expect(result.national ?? false).toBe(vote === "national");
  });

  it("does not treat a cell with the trunk prefix as bare, and reads NANP's leading 1 (trunk prefix and calling code at once) as written with its code", () => {
    expect(classifyCell("1 212 555 0142", { country: "US" })).toEqual({ class: "kept", identifier: "12125550142" });
    expect(classifyCell("12125550142", { country: "US", requireCountryCode: true })).toEqual({ class: "kept", identifier: "12125550142" });
    expect(classifyCell("1 212 555 0142", { country: "US" }).vote).toBeUndefined();
    expect(classifyCell("07400 123456", GB).vote).toBeUndefined();
    expect(classifyCell("8 912 345 67 89", { country: "RU", requireCountryCode: true })).toMatchObject({ class: "no_code" });
  });

  it("reads expanded spreadsheet digits as a bare cell: 1.5062345678E+10 in a DE task is read nationally", () => {
    expect(classifyCell("1.5062345678E+10", { country: "DE" })).toEqual({
      class: "kept",
      identifier: "4915062345678",
      national: true,
      vote: "national",
      spreadsheetExpanded: true,
    });
    expect(classifyCell("4.93012345E+9", { country: "DE" })).toEqual({ class: "invalid", reason: REASONS.scientific });
  });
});

describe("classifyCell on bracketed calling codes and hostile cells", () => {
  it.each([
    ["(+44) 1534 456 016", "GB", "kept", "441534456016"],
    ["(0044) 7400 123456", "US", "other_country", "447400123456"],
    ["( 00 44 ) 7400 123456", "US", "other_country", "447400123456"],
    ["(+7) 912 345 6789", "RU", "kept", "79123456789"],
    ["(020) 7946 0123", "GB", "kept", "442079460123"],
  ])("reads %j in a %s task as %s %s", (cell, country, expected, identifier) => {
    expect(classifyCell(cell, { country: country as CountryCode })).toMatchObject({ class: expected, identifier });
  });

  it.each([
    ["101 digits", "7".repeat(101)],
    ["a number padded inside with spaces", "+44 7400" + " ".repeat(200) + "123456"],
    ["a number followed by a long note", "+44 7400 123456 " + "x".repeat(100)],
  ])("classes %s as invalid: too long to be a phone number", (_name, cell) => {
    expect(classifyCell(cell, GB)).toEqual({ class: "invalid", reason: REASONS.tooLong });
  });

  it("trims the spaces around a cell before measuring it", () => {
    expect(classifyCell(" ".repeat(500) + "+447400123456" + "\u00a0".repeat(500), GB)).toEqual({
      class: "kept",
      identifier: "447400123456",
    });
    expect(classifyCell(" ".repeat(1000), GB).class).toBe("blank");
  });
});

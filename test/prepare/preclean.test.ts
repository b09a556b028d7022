import { describe, expect, it } from "vitest";
import { expandScientific, precleanCell } from "../../src/prepare/classify.js";

describe("precleanCell", () => {
  it.each([
    ["+44 7400 123456", "+44 7400 123456", undefined],
    ["  +447400123456\u00a0", "+447400123456", undefined],
    ["\u200b07400 123456\ufeff", "07400 123456", undefined],
    ['"+447400123456"', "+447400123456", undefined],
    ["“+447400123456”", "+447400123456", undefined],
    ["„07400 123456“", "07400 123456", undefined],
    ['"+447400123456', '"+447400123456', undefined],
    ["'+447400123456", "+447400123456", undefined],
    ["'07400123456'", "07400123456", undefined],
    ["tel:+447400123456", "+447400123456", undefined],
    ["TEL: +44 7400 123456", "+44 7400 123456", undefined],
    ["447400123456.0", "447400123456", undefined],
    ["＋４４７４００１２３４５６", "+447400123456", undefined],
    ["٠٧٤٠٠١٢٣٤٥٦", "07400123456", undefined],
    ["+44 7400 123456 x123", "+44 7400 123456", "123"],
    ["+44 7400 123456 ext. 45", "+44 7400 123456", "45"],
    ["+44 7400 123456 extension 6", "+44 7400 123456", "6"],
    ["+44 7400 123456#789", "+44 7400 123456", "789"],
    ["+44 7400 123456;ext=12", "+44 7400 123456", "12"],
    ["x123", "x123", undefined],
    ["", "", undefined],
  ])("cleans %j to %j (extension %j)", (raw, text, extension) => {
    expect(precleanCell(raw)).toEqual(extension === undefined ? { text } : { text, extension });
  });
});

describe("expandScientific", () => {
  it.each([
    ["4.47400123456E+11", "447400123456"],
    ["4.47400123456e11", "447400123456"],
    ["4.474E+11", undefined],
    ["4.47911E+11", undefined],
    ["1.0E+1", "10"],
    ["447400123456", undefined],
  ])("expands %j to %j", (text, digits) => {
    expect(expandScientific(text)).toBe(digits);
  });
});

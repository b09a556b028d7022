import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../src/api/retry-after.js";

const NOW = Date.UTC(1994, 10, 6, 8, 49, 30); // Sun, 06 Nov 1994 08:49:30 GMT

describe("parseRetryAfter", () => {
  it.each([
    ["0", 0],
    ["7", 7_000],
    ["  120 ", 120_000],
    ["86400", 86_400_000],
    ["Sun, 06 Nov 1994 08:49:37 GMT", 7_000],
    ["Sunday, 06-Nov-94 08:49:37 GMT", 7_000],
    ["Sun Nov  6 08:49:37 1994", 7_000],
    ["Sun, 06 Nov 1994 08:49:30 GMT", 0],
    ["Sun, 06 Nov 1994 08:00:00 GMT", 0],
  ])("reads %j as %i ms", (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it.each([
    [undefined],
    [null],
    [""],
    ["   "],
    ["-5"],
    ["1.5"],
    ["5s"],
    ["soon"],
    ["1994-11-06T08:49:37Z"],
    ["Sun, 06 Nov 1994 08:49:37"],
    ["Sun, 32 Nov 1994 08:49:37 GMT"],
    ["99999999999999999999"],
  ])("returns undefined for the unreadable value %j", (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it("uses the first value when the header was sent twice", () => {
    expect(parseRetryAfter(["3", "9"], NOW)).toBe(3_000);
  });

  it("does not cap a long wait, leaving that to the retry policy", () => {
    expect(parseRetryAfter("3600", NOW)).toBe(3_600_000);
  });
});

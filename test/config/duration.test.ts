import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS, parseDuration } from "../../src/config/duration.js";
import { UsageError } from "../../src/errors.js";

/** The message parseDuration refuses `text` with (and that it is a usage error, exit 2). */
function refusal(text: string, rule?: { aboveZero?: boolean }): string {
  try {
    parseDuration(text, rule);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).message;
  }
  throw new Error(`${JSON.stringify(text)} was accepted`);
}

describe("parseDuration", () => {
  it.each([
    ["0", 0],
    ["30", 30],
    ["0.5", 0.5],
    [".5", 0.5],
    ["3600", 3600],
    ["90s", 90],
    ["1.5s", 1.5],
    ["15m", 900],
    ["1.5m", 90],
    ["12h", 43_200],
    ["0.1h", 360],
    ["7d", 604_800],
    ["24d", 2_073_600],
    ["24.8d", 2_142_720],
    ["596h", 2_145_600],
    ["  45  ", 45],
    ["0.0005", 0.001],
    ["1.0004", 1],
    ["2147483", 2_147_483],
    ["2147483.647", 2_147_483.647],
  ])("reads %j as %d seconds", (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each([
    [""],
    [" "],
    ["soon"],
    ["-5"],
    ["+5"],
    ["1e3"],
    ["0x10"],
    ["Infinity"],
    ["NaN"],
    ["5."],
    ["5 m"],
    ["5M"],
    ["5ms"],
    ["5min"],
    ["5w"],
    ["m"],
    ["1,5"],
    ["1_000"],
    ["1h30m"],
  ])("refuses %j, naming the forms it takes", (text) => {
    expect(refusal(text)).toBe(
      `expected a duration: a number of seconds (90), or one with a unit: s, m, h or d (90s, 15m, 12h, 7d); got "${text}"`,
    );
  });

  it.each([
    ["3600000", "3600000 is read as seconds (41.7 days)"],
    ["2592000", "2592000 is read as seconds (30 days)"],
    ["2147484", "2147484 is read as seconds (24.9 days)"],
    ["2147483.648", "2147483.648 is read as seconds (24.9 days)"],
    ["99999999999", "99999999999 is read as seconds (1157407.4 days)"],
    ["30d", "30d is 30 days"],
    ["25d", "25d is 25 days"],
    ["597h", "597h is 24.9 days"],
    ["35792m", "35792m is 24.9 days"],
    ["2147484s", "2147484s is 24.9 days"],
  ])("refuses %j as longer than a timer holds, saying the unit it was read in and the longest", (text, read) => {
    expect(refusal(text)).toBe(
      `${read}; the longest is 2147483 seconds (24.8 days). A number without a unit is seconds; 15m, 12h and 7d name theirs.`,
    );
  });

  it("accepts exactly the longest delay a timer holds, and not a millisecond more", () => {
    expect(parseDuration(String(MAX_TIMER_MS / 1000)) * 1000).toBe(MAX_TIMER_MS);
    expect(() => parseDuration(String((MAX_TIMER_MS + 1) / 1000))).toThrow(UsageError);
  });

  it.each([["0"], ["0s"], ["0.0004"], ["0d"]])("allows %j by default and refuses it where a duration must be above 0", (text) => {
    expect(parseDuration(text)).toBe(0);
    expect(refusal(text, { aboveZero: true })).toBe(`expected a duration above 0 (such as 30, 30s or 5m); got "${text}"`);
  });

  it("takes what is above 0 where it must be", () => {
    expect(parseDuration("0.001", { aboveZero: true })).toBe(0.001);
    expect(parseDuration("1m", { aboveZero: true })).toBe(60);
  });
});

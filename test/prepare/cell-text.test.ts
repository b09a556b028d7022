import { describe, expect, it } from "vitest";
import { cellText, excelDate, isoDate, numberText, showsMoreThanACell, type WorkbookValue } from "../../src/prepare/cell-text.js";
import { classifyCell, REASONS } from "../../src/prepare/index.js";

describe("cellText (a workbook cell as the text preparation reads)", () => {
  it.each<[string, WorkbookValue, string | undefined, string]>([
    ["text as it is", "+44 7400 123456", undefined, "+44 7400 123456"],
    ["a formula-like string stays text", "=1+1", undefined, "=1+1"],
    ["a 12-digit number as its digits", 447400123456, undefined, "447400123456"],
    ["the same under General", 447400123456, "General", "447400123456"],
    ["the same under the text format", 447400123456, "@", "447400123456"],
    ["15 digits, the most Excel holds exactly", 123456789012345, undefined, "123456789012345"],
    ["a number that lost its leading zero", 7400123456, undefined, "7400123456"],
    ["zero-padded by a digits format", 7400123456, "00000000000", "07400123456"],
    ["padded only to the format's zeros", 7400123456, "0##########", "07400123456"],
    ["with the format's literal plus", 447400123456, "\\+0", "+447400123456"],
    ["a format with more than digits shows the digits", 447400123456, "#,##0", "447400123456"],
    ["16 digits: Excel kept 15, shown as General shows it", 4474001234567891, undefined, "4.47400123456789E+15"],
    ["a large number in scientific notation", 4.474e17, undefined, "4.474E+17"],
    ["a fraction, rounded to 15 digits", 0.1 + 0.2, undefined, "0.3"],
    ["a negative number", -5, undefined, "-5"],
    ["a date", new Date(Date.UTC(2024, 0, 31)), "yyyy-mm-dd", "2024-01-31"],
    ["a date with a time", new Date(Date.UTC(2024, 0, 31, 9, 30, 5)), "yyyy-mm-dd hh:mm:ss", "2024-01-31 09:30:05"],
    ["a boolean", true, undefined, "TRUE"],
    ["an error", { error: "#N/A" }, undefined, "#N/A"],
    ["an escaped character decoded", "line_x000D_end", undefined, "line\rend"],
    ["an empty cell", null, undefined, ""],
  ])("%s", (_what, value, numFmt, expected) => {
    expect(cellText(value, numFmt)).toBe(expected);
  });

  it("never decodes an escape into NUL, which preparation uses between values", () => {
    expect(cellText("a_x0000_b", undefined)).toBe("a\ufffdb");
  });

  it("gives a number Excel has rounded the CSV spreadsheet-notation reason, and keeps one it holds exactly", () => {
    expect(classifyCell(numberText(4474001234567891, undefined), { country: "GB" })).toMatchObject({
      class: "invalid",
      reason: REASONS.scientific,
    });
    expect(classifyCell(numberText(447400123456, undefined), { country: "GB" })).toMatchObject({
      class: "kept",
      identifier: "447400123456",
    });
  });

  it.each<[string, number, boolean, string]>([
    ["serial 45322 in the 1900 system", 45322, false, "2024-01-31"],
    ["a serial with a time", 45323.39589120371, false, "2024-02-01 09:30:05"],
    ["the 1904 system's serial for the same day", 43860, true, "2024-01-31"],
    ["serial 1, which Excel shows as 1900-01-01 (it counts a 29 February 1900)", 1, false, "1900-01-01"],
    ["serial 61, the first after that day", 61, false, "1900-03-01"],
  ])("shows a date-formatted number: %s", (_what, serial, date1904, expected) => {
    expect(cellText(excelDate(serial, date1904), "yyyy-mm-dd")).toBe(expected);
  });

  it("leaves a date serial Excel cannot show (it shows ####) to be shown as a number", () => {
    expect([excelDate(-1, false), excelDate(2_958_466, false)]).toEqual([undefined, undefined]);
  });

  it("reads an ISO 8601 date cell (type d) with its clock time as written", () => {
    expect(cellText(isoDate("2024-01-31T00:00:00Z"), undefined)).toBe("2024-01-31");
    expect(cellText(isoDate("2024-02-01T09:30:05"), undefined)).toBe("2024-02-01 09:30:05");
    expect(isoDate("31/01/2024")).toBeUndefined();
  });

  it("counts a cell's characters as Excel does, an escape as the one character it stands for", () => {
    expect(showsMoreThanACell("x".repeat(32_767))).toBe(false);
    expect(showsMoreThanACell("x".repeat(32_768))).toBe(true);
    expect(showsMoreThanACell("_x000D_".repeat(32_767))).toBe(false);
  });
});

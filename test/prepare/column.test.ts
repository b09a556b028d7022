import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { chooseColumn, type ColumnInput } from "../../src/prepare/column.js";

const sample = (rows: string[][]) => rows.map((fields, i) => ({ line: i + 2, fields, raw: fields.join(",") }));
const isNumber = (cell: string) => /^\+?\d[\d ]{8,}$/.test(cell);

function input(overrides: Partial<ColumnInput>): ColumnInput {
  return {
    option: undefined,
    header: ["id", "name", "phone", "notes"],
    columnCount: 4,
    sample: sample([["1", "Amy", "07400 123456", "x"]]),
    isNumber,
    sourceName: "list.csv",
    ...overrides,
  };
}

describe("chooseColumn", () => {
  it.each([
    ["phone", 2],
    ["PHONE", 2],
    [" notes ", 3],
    ["1", 0],
    ["3", 2],
  ])("takes --column %j as column index %i", (option, index) => {
    expect(chooseColumn(input({ option }))).toMatchObject({ index, chosenBy: "option" });
  });

  it("takes a recorded column as it is, and says it was recorded rather than given by --column", () => {
    expect(chooseColumn(input({ option: { recordedIndex: 2 } }))).toEqual({ index: 2, name: "phone", chosenBy: "record" });
  });

  it("names the column taken by number when there is a header", () => {
    expect(chooseColumn(input({ option: "3" }))).toEqual({ index: 2, name: "phone", chosenBy: "option" });
  });

  it.each([
    ["mobile", /has no column named "mobile" \(columns: 1 "id", 2 "name", 3 "phone", 4 "notes"\)/],
    ["5", /has no column 5 \(columns: 1 "id", 2 "name", 3 "phone", 4 "notes"\)/],
    ["0", /has no column 0/],
  ])("rejects --column %j with a UsageError listing the columns", (option, message) => {
    expect(() => chooseColumn(input({ option }))).toThrow(UsageError);
    expect(() => chooseColumn(input({ option }))).toThrow(message);
  });

  it("rejects a column name when the file has no header", () => {
    expect(() => chooseColumn(input({ option: "phone", header: undefined }))).toThrow(/has no header row.*\(columns: 1–4\)/);
  });

  it("chooses a phone-like header name", () => {
    expect(chooseColumn(input({}))).toEqual({ index: 2, name: "phone", chosenBy: "header" });
  });

  it("prefers a mobile column over a phone column", () => {
    expect(chooseColumn(input({ header: ["home phone", "mobile_no", "name", "x"] }))).toMatchObject({ index: 1, chosenBy: "header" });
  });

  it("breaks a tie between equally named columns by content", () => {
    const header = ["Phone 1", "Phone 2", "name", "x"];
    const rows = sample([
      ["", "07400 123456", "Amy", ""],
      ["", "07400 123457", "Bob", ""],
    ]);
    expect(chooseColumn(input({ header, sample: rows }))).toMatchObject({ index: 1, chosenBy: "header" });
  });

  it("chooses by content when no header names a phone column", () => {
    const header = ["Kunde", "Rufnummer", "Notiz", "x"];
    const rows = sample([
      ["Amy", "07400 123456", "1", ""],
      ["Bob", "+44 7400 123457", "2", ""],
    ]);
    expect(chooseColumn(input({ header, sample: rows }))).toEqual({ index: 1, name: "Rufnummer", chosenBy: "content" });
  });

  it("refuses to guess when no column holds numbers", () => {
    const header = ["a", "b", "c", "d"];
    expect(() => chooseColumn(input({ header, sample: sample([["x", "y", "z", "w"]]) }))).toThrow(
      /No column of list.csv looks like phone numbers/,
    );
  });

  it("takes the only column, with or without a header", () => {
    expect(chooseColumn(input({ header: ["numbers"], columnCount: 1 }))).toEqual({ index: 0, name: "numbers", chosenBy: "only-column" });
    expect(chooseColumn(input({ header: undefined, columnCount: 1 }))).toEqual({ index: 0, chosenBy: "only-column" });
  });

  it("takes the first column of a file without a header", () => {
    expect(chooseColumn(input({ header: undefined }))).toEqual({ index: 0, chosenBy: "first-column" });
  });
});

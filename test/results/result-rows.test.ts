import { describe, expect, it } from "vitest";
import { ResultFileError } from "../../src/results/errors.js";
import { arrangeRow, isHeaderRow, outputColumns, projection, sourceLayout } from "../../src/results/result-rows.js";

describe("isHeaderRow", () => {
  it.each([
    [["identifier", "activated"], true],
    [["  IDENTIFIER ", "activated"], true],
    [["Identifier"], true],
    [["activated", "identifier"], true],
    [["phone", "status"], true],
    [["", "identifier", "activated"], true],
    [["4915112345678", "true"], false],
    [["  4915112345678 ", "false"], false],
    [["+44 20 7946 0958", "true"], false],
    [["", "true"], false],
    [[""], false],
    [[], false],
  ])("classes %j as a header: %s", (fields, expected) => {
    expect(isHeaderRow(fields)).toBe(expected);
  });
});

describe("sourceLayout", () => {
  it("maps a header in another order onto the spec's names and keeps extras in file order", () => {
    const layout = sourceLayout(["Number_Type", "zeta", "identifier", "CARRIER", "alpha"], "carrier_batch");
    expect(layout.hasHeader).toBe(true);
    expect(layout.columns).toEqual(["number_type", "zeta", "identifier", "carrier", "alpha"]);
    expect(layout.extras).toEqual(["zeta", "alpha"]);
    expect(layout.missing).toEqual(["underlying_carrier", "country_code", "region", "city"]);
    expect(outputColumns(layout, "carrier_batch")).toEqual([
      "identifier",
      "carrier",
      "underlying_carrier",
      "number_type",
      "country_code",
      "region",
      "city",
      "zeta",
      "alpha",
    ]);
  });

  it("assumes a headerless file is in the spec's order and names trailing fields extra_N", () => {
    const layout = sourceLayout(["4915112345678", "true", "x", "y"], "number_validation_batch");
    expect(layout.hasHeader).toBe(false);
    expect(layout.columns).toEqual(["identifier", "activated", "extra_1", "extra_2"]);
    expect(layout.extras).toEqual(["extra_1", "extra_2"]);
  });

  it("names empty and duplicate header names so every output column is distinct", () => {
    const layout = sourceLayout(["identifier", "activated", "", "note", "note", "activated"], "number_activity_batch");
    expect(layout.columns).toEqual(["identifier", "activated", "extra_1", "note", "note_2", "activated_2"]);
  });

  it("rejects a header without an identifier column", () => {
    expect(() => sourceLayout(["phone", "activated"], "number_validation_batch")).toThrow(ResultFileError);
    expect(() => sourceLayout(["phone", "activated"], "number_validation_batch")).toThrow(/no identifier column/);
  });
});

describe("projection and arrangeRow", () => {
  it("puts fields in output order and leaves absent columns empty", () => {
    const indexes = projection(["activated", "identifier"], ["identifier", "activated", "extra"]);
    expect(indexes).toEqual([1, 0, -1]);
    expect(arrangeRow(["true", "4915112345678"], indexes)).toEqual(["4915112345678", "true", ""]);
  });

  it("pads a short row with empty fields", () => {
    expect(arrangeRow(["4915112345678"], [0, 1])).toEqual(["4915112345678", ""]);
  });

  it("refuses a source column the output does not have", () => {
    expect(() => projection(["identifier", "activated", "surprise"], ["identifier", "activated"])).toThrow(
      expect.objectContaining({ code: "COLUMNS_DIFFER" }),
    );
  });
});

import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { jsonValue, rendererFor, writeRows, type TextFormat } from "../../src/results/render.js";
import { collector, concatText, rowsOf } from "./helpers.js";

const HEADER = ["identifier", "activated", "note"];
const ROWS = [
  ["4915112345678", "true", 'says "hi", twice'],
  ["4915112345679", "false", "line one\nline two"],
  ["4915112345680", "", "tab\there"],
];

async function render(format: TextFormat, rows = ROWS, extra: { tableRows?: number; colour?: boolean } = {}) {
  return concatText(rendererFor({ format, ...extra })(rowsOf([HEADER, ...rows])));
}

describe("output formats", () => {
  it.each([
    ["csv", ","],
    ["tsv", "\t"],
  ] as const)("writes %s that csv-parse reads back unchanged", async (format, delimiter) => {
    const text = await render(format);
    expect(parse(text, { delimiter })).toEqual([HEADER, ...ROWS]);
  });

  it("writes JSON Lines with the spec's field names and activated as a boolean", async () => {
    const lines = (await render("jsonl")).trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { identifier: "4915112345678", activated: true, note: 'says "hi", twice' },
      { identifier: "4915112345679", activated: false, note: "line one\nline two" },
      { identifier: "4915112345680", activated: "", note: "tab\there" },
    ]);
  });

  it("writes one JSON array that JSON.parse reads back", async () => {
    const parsed = JSON.parse(await render("json")) as Array<Record<string, unknown>>;
    expect(parsed).toHaveLength(3);
    expect(parsed[0]).toEqual({ identifier: "4915112345678", activated: true, note: 'says "hi", twice' });
  });

  it("writes an empty JSON array and empty JSON Lines when there are no rows", async () => {
    expect(JSON.parse(await render("json", []))).toEqual([]);
    expect(await render("jsonl", [])).toBe("");
  });

  it("writes only the header when a CSV has no rows", async () => {
    expect(await render("csv", [])).toBe("identifier,activated,note\n");
  });

  it("shows the first N rows in a table without escape codes unless colour is on", async () => {
    const plain = await render("table", ROWS, { tableRows: 1 });
    expect(plain).toContain("4915112345678");
    expect(plain).not.toContain("4915112345679");
    expect(plain).not.toContain("\u001b[");
    expect(await render("table", ROWS, { tableRows: 1, colour: true })).toContain("\u001b[");
  });

  it.each([
    ["activated", "true", true],
    ["activated", "false", false],
    ["activated", "TRUE", "TRUE"],
    ["activated", "", ""],
    // A chain's later product: its `activated` under its short name.
    ["activity_activated", "false", false],
    ["high_value_activated", "true", true],
    ["identifier", "4915112345678", "4915112345678"],
    ["note", "true", "true"],
  ] as const)("renders %s=%j in JSON as %j", (column, value, expected) => {
    expect(jsonValue(column, value)).toBe(expected);
  });

  it("writes into a Writable and reports the bytes written", async () => {
    const out = collector();
    const { bytes } = await writeRows(rowsOf([HEADER, ...ROWS]), out.stream, { format: "csv" });
    const text = await out.text();
    expect(bytes).toBe(Buffer.byteLength(text));
  });
});

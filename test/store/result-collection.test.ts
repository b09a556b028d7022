import { describe, expect, it } from "vitest";
import { ResultCollection } from "../../src/store/result-collection.js";

/** The rows in the order the collection hands them out: number, then stored values. */
function inKeyOrder(rows: ResultCollection): Array<[number, readonly (string | null)[]]> {
  return Array.from({ length: rows.size }, (_, at) => [rows.identifierAt(at), rows.valuesAt(at)]);
}

describe("the rows of a result collected for recording", () => {
  it("hands the rows out in number order, each with its own values", () => {
    const rows = new ResultCollection(["activated"]);
    rows.add(["447400000003", "true"]);
    rows.add(["12025550100", "false"]);
    rows.add(["447400000001", ""]);
    // Stored values: one per ledger column (activated first, the carrier columns NULL), then `extra`.
    const stored = (activated: string) => [activated, null, null, null, null, null, null, null];
    expect(inKeyOrder(rows)).toEqual([
      [12025550100, stored("false")],
      [447400000001, stored("")],
      [447400000003, stored("true")],
    ]);
  });

  it("keeps each distinct tuple of values once, however many rows share it", () => {
    const rows = new ResultCollection(["carrier", "number_type"]);
    for (let at = 0; at < 1000; at++) rows.add([String(447400000000 + ((at * 7919) % 1000)), at % 2 ? "EE" : "Vodafone", "mobile"]);
    expect(rows.size).toBe(1000);
    expect(rows.distinctValues).toBe(2);
    const identifiers = inKeyOrder(rows).map(([identifier]) => identifier);
    expect(identifiers).toEqual([...identifiers].sort((a, b) => a - b));
    expect(new Set(identifiers).size).toBe(1000);
  });

  it("hands out one values array for every row with the same values (recording writes each once)", () => {
    const rows = new ResultCollection(["carrier"]);
    for (const [identifier, carrier] of [
      ["447400000002", "EE"],
      ["447400000001", "Vodafone"],
      ["447400000003", "EE"],
    ])
      rows.add([identifier!, carrier!]);
    expect(rows.valuesAt(1)).toBe(rows.valuesAt(2));
    expect(rows.valuesAt(0)).not.toBe(rows.valuesAt(1));
  });

  it("keeps rows that came in number order as they came, and sorts them once one comes out of order", () => {
    const rows = new ResultCollection(["activated"]);
    for (let at = 0; at < 5; at++) rows.add([String(447400000001 + at), "true"]);
    expect(inKeyOrder(rows).map(([identifier]) => identifier)).toEqual([
      447400000001, 447400000002, 447400000003, 447400000004, 447400000005,
    ]);
    rows.add(["447400000000", "false"]);
    expect(inKeyOrder(rows).map(([identifier, values]) => [identifier, values[0]])).toEqual([
      [447400000000, "false"],
      [447400000001, "true"],
      [447400000002, "true"],
      [447400000003, "true"],
      [447400000004, "true"],
      [447400000005, "true"],
    ]);
  });

  it("leaves out a row whose identifier is no E.164 number's digits", () => {
    const rows = new ResultCollection(["activated"]);
    for (const identifier of ["", "0447400000001", "+447400000001", "4474000000011234", "447400000001"]) rows.add([identifier, "true"]);
    expect(inKeyOrder(rows).map(([identifier]) => identifier)).toEqual([447400000001]);
  });

  it("tells apart values that join to the same text only through a NUL inside one of them", () => {
    const rows = new ResultCollection(["carrier", "region"]);
    rows.add(["447400000001", "a\0b", "c"]);
    rows.add(["447400000002", "a", "b\0c"]);
    expect(rows.distinctValues).toBe(2);
    // A value with a NUL goes to `extra` as JSON, its column left NULL (see splitValues).
    expect(rows.valuesAt(0).at(-1)).toBe(JSON.stringify({ carrier: "a\0b" }));
    expect(rows.valuesAt(1).at(-1)).toBe(JSON.stringify({ region: "b\0c" }));
  });

  it("keeps the values of extra columns, in `extra`", () => {
    const rows = new ResultCollection(["carrier", "ported"]);
    rows.add(["447400000001", "EE", "yes"]);
    expect(rows.valuesAt(0)).toEqual([null, "EE", null, null, null, null, null, JSON.stringify({ ported: "yes" })]);
  });
});

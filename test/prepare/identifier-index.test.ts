import { describe, expect, it } from "vitest";
import { IdentifierIndex, identifierKey } from "../../src/prepare/identifier-index.js";

/** The index's identifiers, read back from the lines it writes. */
function identifiers(index: IdentifierIndex): string[] {
  return index.lines(0, index.size).toString("latin1").split("\n").slice(0, -1);
}

function add(index: IdentifierIndex, identifier: string, line: number): number | undefined {
  return index.firstLineOf(identifierKey(identifier), line);
}

describe("IdentifierIndex", () => {
  it("remembers the first line of each identifier and lists identifiers in first-seen order", () => {
    const index = new IdentifierIndex();
    expect(add(index, "447400123456", 2)).toBeUndefined();
    expect(add(index, "12125550142", 3)).toBeUndefined();
    expect(add(index, "447400123456", 9)).toBe(2);
    expect(index.size).toBe(2);
    expect(identifiers(index)).toEqual(["447400123456", "12125550142"]);
  });

  it.each(["1", "10", "99999999", "100000000", "100000001", "447400000001", "447400100000", "999999999999999"])(
    "writes %s back digit for digit",
    (identifier) => {
      const index = new IdentifierIndex();
      add(index, identifier, 1);
      expect(index.lines(0, 1).toString("latin1")).toBe(`${identifier}\n`);
    },
  );

  it("keeps identifiers longer than 15 digits exactly, in order with the others", () => {
    const index = new IdentifierIndex();
    const long = "4930123456789012345";
    add(index, "447400123456", 1);
    add(index, long, 2);
    add(index, "447400123457", 3);
    expect(add(index, long, 4)).toBe(2);
    expect(add(index, "4930123456789012346", 5)).toBeUndefined();
    expect(identifiers(index)).toEqual(["447400123456", long, "447400123457", "4930123456789012346"]);
    expect(index.lines(1, 3).toString("latin1")).toBe(`${long}\n447400123457\n`);
  });

  it("stays exact through growth over 100,000 identifiers", () => {
    const index = new IdentifierIndex();
    const ids = Array.from({ length: 100_000 }, (_, i) => String(447_400_000_000 + i * 7919));
    ids.forEach((id, i) => expect(add(index, id, i + 1)).toBeUndefined());
    ids.forEach((id, i) => expect(add(index, id, 0)).toBe(i + 1));
    expect(identifiers(index)).toEqual(ids);
  });
});

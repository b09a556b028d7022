import { describe, expect, it } from "vitest";
import { identifierKey, writeIdentifier } from "../../src/spec/identifier-key.js";
import { IdentifierSet } from "../../src/spec/identifier-set.js";

function add(set: IdentifierSet, identifier: string, line: number): number | undefined {
  return set.firstLineOf(identifierKey(identifier), line);
}

function written(identifier: string): string {
  const out = Buffer.alloc(64);
  return out.toString("latin1", 0, writeIdentifier(out, 0, identifierKey(identifier)));
}

describe("IdentifierSet", () => {
  it("remembers the first line of each identifier", () => {
    const set = new IdentifierSet();
    expect(add(set, "447400123456", 2)).toBeUndefined();
    expect(add(set, "12125550142", 3)).toBeUndefined();
    expect(add(set, "447400123456", 9)).toBe(2);
    expect(add(set, "12125550142", 10)).toBe(3);
    expect(set.size).toBe(2);
  });

  it("keeps identifiers longer than 15 digits exactly", () => {
    const set = new IdentifierSet();
    const long = "4930123456789012345";
    add(set, "447400123456", 1);
    expect(add(set, long, 2)).toBeUndefined();
    expect(add(set, long, 4)).toBe(2);
    expect(add(set, "4930123456789012346", 5)).toBeUndefined();
    expect(set.size).toBe(3);
  });

  it("stays exact through many doublings over 300,000 identifiers", () => {
    const set = new IdentifierSet();
    const ids = Array.from({ length: 300_000 }, (_, i) => String(447_400_000_000 + i * 7919));
    expect(ids.filter((id, i) => add(set, id, i + 1) !== undefined)).toEqual([]);
    expect(ids.filter((id, i) => add(set, id, 0) !== i + 1)).toEqual([]);
    expect(set.size).toBe(300_000);
  });

  it("tells apart sequential numbers and numbers differing only in their high digits", () => {
    const set = new IdentifierSet();
    const ids = Array.from({ length: 40_000 }, (_, i) => (i % 2 ? 447_400_000_000 + i : 447_400_000_000 + i * 4_294_967_296));
    expect(ids.filter((id, i) => set.firstLineOf(id, i + 1) !== undefined)).toEqual([]);
    expect(ids.filter((id, i) => set.firstLineOf(id, 0) !== i + 1)).toEqual([]);
    expect(set.size).toBe(40_000);
  });

  it("keeps the largest 15-digit number and line numbers past 2^31", () => {
    const set = new IdentifierSet();
    expect(set.firstLineOf(999_999_999_999_999, 3_000_000_000)).toBeUndefined();
    expect(set.firstLineOf(999_999_999_999_998, 1)).toBeUndefined();
    expect(set.firstLineOf(999_999_999_999_999, 5)).toBe(3_000_000_000);
  });
});

describe("writeIdentifier", () => {
  it.each(["1", "10", "99999999", "100000000", "100000001", "447400000001", "447400100000", "999999999999999", "4930123456789012345"])(
    "writes %s back digit for digit",
    (identifier) => expect(written(identifier)).toBe(identifier),
  );
});

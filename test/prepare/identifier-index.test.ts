import { describe, expect, it } from "vitest";
import { IdentifierIndex } from "../../src/prepare/identifier-index.js";

describe("IdentifierIndex", () => {
  it("remembers the first line of each identifier and lists identifiers in first-seen order", () => {
    const index = new IdentifierIndex();
    expect(index.firstLineOf("447400123456", 2)).toBeUndefined();
    expect(index.firstLineOf("12125550142", 3)).toBeUndefined();
    expect(index.firstLineOf("447400123456", 9)).toBe(2);
    expect(index.size).toBe(2);
    expect([...index.identifiers()]).toEqual(["447400123456", "12125550142"]);
  });

  it("keeps identifiers longer than 15 digits exactly, in order with the others", () => {
    const index = new IdentifierIndex();
    const long = "4930123456789012345";
    index.firstLineOf("447400123456", 1);
    index.firstLineOf(long, 2);
    index.firstLineOf("447400123457", 3);
    expect(index.firstLineOf(long, 4)).toBe(2);
    expect(index.firstLineOf("4930123456789012346", 5)).toBeUndefined();
    expect([...index.identifiers()]).toEqual(["447400123456", long, "447400123457", "4930123456789012346"]);
  });

  it("stays exact through growth over 100,000 identifiers", () => {
    const index = new IdentifierIndex();
    const ids = Array.from({ length: 100_000 }, (_, i) => String(447_400_000_000 + i * 7919));
    ids.forEach((id, i) => expect(index.firstLineOf(id, i + 1)).toBeUndefined());
    ids.forEach((id, i) => expect(index.firstLineOf(id, 0)).toBe(i + 1));
    expect([...index.identifiers()]).toEqual(ids);
  });
});

import { describe, expect, it } from "vitest";
import { IdentifierIndex, grownBuffer, identifierKey, reservedShardBytes, tableBuffer, writeIdentifier } from "../../src/prepare/identifier-index.js";

function add(index: IdentifierIndex, identifier: string, line: number): number | undefined {
  return index.firstLineOf(identifierKey(identifier), line);
}

function written(identifier: string): string {
  const out = Buffer.alloc(64);
  return out.toString("latin1", 0, writeIdentifier(out, 0, identifierKey(identifier)));
}

describe("IdentifierIndex", () => {
  it("remembers the first line of each identifier", () => {
    const index = new IdentifierIndex();
    expect(add(index, "447400123456", 2)).toBeUndefined();
    expect(add(index, "12125550142", 3)).toBeUndefined();
    expect(add(index, "447400123456", 9)).toBe(2);
    expect(add(index, "12125550142", 10)).toBe(3);
    expect(index.size).toBe(2);
  });

  it("keeps identifiers longer than 15 digits exactly", () => {
    const index = new IdentifierIndex();
    const long = "4930123456789012345";
    add(index, "447400123456", 1);
    expect(add(index, long, 2)).toBeUndefined();
    expect(add(index, long, 4)).toBe(2);
    expect(add(index, "4930123456789012346", 5)).toBeUndefined();
    expect(index.size).toBe(3);
  });

  it("stays exact through growth over 100,000 identifiers", () => {
    const index = new IdentifierIndex();
    const ids = Array.from({ length: 100_000 }, (_, i) => String(447_400_000_000 + i * 7919));
    ids.forEach((id, i) => expect(add(index, id, i + 1)).toBeUndefined());
    ids.forEach((id, i) => expect(add(index, id, 0)).toBe(i + 1));
    expect(index.size).toBe(100_000);
  });

  it("tells apart sequential numbers, and numbers differing only in their high digits, through every shard's growth", () => {
    const index = new IdentifierIndex();
    const ids = Array.from({ length: 40_000 }, (_, i) => (i % 2 ? 447_400_000_000 + i : 447_400_000_000 + i * 4_294_967_296));
    ids.forEach((id, i) => expect(index.firstLineOf(id, i + 1)).toBeUndefined());
    ids.forEach((id, i) => expect(index.firstLineOf(id, 0)).toBe(i + 1));
    expect(index.size).toBe(40_000);
  });
});

describe("writeIdentifier", () => {
  it.each(["1", "10", "99999999", "100000000", "100000001", "447400000001", "447400100000", "999999999999999", "4930123456789012345"])(
    "writes %s back digit for digit",
    (identifier) => expect(written(identifier)).toBe(identifier),
  );
});

describe("IdentifierIndex.release", () => {
  it("forgets every identifier and keeps working", () => {
    const index = new IdentifierIndex();
    const ids = Array.from({ length: 20_000 }, (_, i) => String(447_400_000_000 + i));
    ids.forEach((id, i) => add(index, id, i + 1));
    add(index, "4930123456789012345", 20_001);
    index.release();
    expect(index.size).toBe(0);
    expect(add(index, ids[0]!, 7)).toBeUndefined();
    expect(add(index, "4930123456789012345", 8)).toBeUndefined();
    expect(add(index, ids[0]!, 9)).toBe(7);
    ids.slice(1).forEach((id, i) => expect(add(index, id, i + 10)).toBeUndefined());
    expect(index.size).toBe(20_001);
  });
});

describe("table buffers", () => {
  it("reserve address space in proportion to the list, with room for an uneven share, up to 12 MiB a table", () => {
    const shards = 256;
    // 1.6 M numbers: the tables end at 8,828 slots each (6,250 keys on average, growing by a quarter at 4/5 full).
    expect(reservedShardBytes(1_600_000)).toBeGreaterThan(8_828 * 12);
    expect(reservedShardBytes(1_600_000) * shards).toBeLessThan(64 * 1024 * 1024);
    expect(reservedShardBytes(10_000_000)).toBeGreaterThan(reservedShardBytes(1_600_000));
    expect(reservedShardBytes(1e12)).toBe(12 * 1024 * 1024);
  });


  it("grow in place within their reservation, keeping their bytes", () => {
    const buffer = tableBuffer(16, 64);
    new Uint8Array(buffer).set([1, 2, 3]);
    const grown = grownBuffer(buffer, 48, 64);
    expect(grown).toBe(buffer);
    expect(grown.byteLength).toBe(48);
    expect([...new Uint8Array(grown, 0, 4)]).toEqual([1, 2, 3, 0]);
    expect(new Uint8Array(grown, 16).every((byte) => byte === 0)).toBe(true);
  });

  it("move to a new, larger reservation beyond theirs", () => {
    const buffer = tableBuffer(16, 32);
    const grown = grownBuffer(buffer, 48, 32);
    expect(grown).not.toBe(buffer);
    expect(grown.byteLength).toBe(48);
    expect(grown.maxByteLength).toBeGreaterThanOrEqual(48 * 4);
  });

  it("replace a fixed-size buffer", () => {
    const fixed = new ArrayBuffer(16);
    const grown = grownBuffer(fixed, 32, 64);
    expect(grown).not.toBe(fixed);
    expect(grown.byteLength).toBe(32);
  });
});

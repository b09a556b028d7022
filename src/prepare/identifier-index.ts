/**
 * An identifier as the index stores it: the number itself up to 15 digits (all
 * of E.164, exact in a double), the string beyond. A worker computes the key so
 * that only numbers cross the thread boundary.
 */
export type IdentifierKey = number | string;

/** Doubles hold every integer below 2^53 exactly: all 15-digit numbers. */
const MAX_EXACT_DIGITS = 15;

export function identifierKey(identifier: string): IdentifierKey {
  if (identifier.length > MAX_EXACT_DIGITS) return identifier;
  let value = 0;
  for (let i = 0; i < identifier.length; i++) value = value * 10 + (identifier.charCodeAt(i) - 48);
  return value;
}

/**
 * Writes an identifier key back as its ASCII digits at `at` in `out` and returns
 * the end; `out` needs room for 15 bytes or the string's length. Digits are
 * written straight from the number, ~10× faster than String(number).
 */
export function writeIdentifier(out: Buffer, at: number, key: IdentifierKey): number {
  if (typeof key === "string") return at + out.write(key, at, "latin1");
  // Two exact halves, each small enough for integer arithmetic.
  const high = Math.floor(key / 1e8);
  if (high > 0) at = writeDigits(out, at, high, 0);
  return writeDigits(out, at, key - high * 1e8, high > 0 ? 8 : 0);
}

/** The most bytes writeIdentifier writes for a numeric key. */
export const MAX_NUMERIC_IDENTIFIER_BYTES = MAX_EXACT_DIGITS;

/**
 * The kept identifiers seen so far, with the line each was first seen on: the
 * one structure of preparation that grows with the list, so it is kept small.
 *
 * Numeric keys live in open-addressing tables of typed arrays, 12 bytes a slot
 * and no string kept alive (a Map of strings took several times the memory and
 * time). The keys are spread over 256 tables that each grow on their own when
 * 3/4 full, by half, so memory follows the count closely (16–24 bytes a
 * number), and growing never holds two copies of everything. The rare
 * longer identifiers go in a Map. First-seen order is not kept here:
 * preparation writes each identifier to the upload file as it first appears.
 */
export class IdentifierIndex {
  private readonly shards = Array.from({ length: SHARDS }, () => new Shard(INITIAL_SHARD_SLOTS));
  private readonly long = new Map<string, number>();
  private numeric = 0;

  get size(): number {
    return this.numeric + this.long.size;
  }

  /** Records `key` as first seen on `line` and returns undefined, or returns the line it was first seen on. */
  firstLineOf(key: IdentifierKey, line: number): number | undefined {
    if (typeof key === "string") {
      const first = this.long.get(key);
      if (first === undefined) this.long.set(key, line);
      return first;
    }
    const hashed = hash(key);
    const first = this.shards[hashed >>> SHARD_SHIFT]!.firstLineOf(key, hashed, line);
    if (first === undefined) this.numeric++;
    return first;
  }
}

const SHARDS = 256;
const SHARD_SHIFT = 24;
const INITIAL_SHARD_SLOTS = 64;

/**
 * One open-addressing table (linear probing, 0 = empty: an identifier is never
 * 0). It grows by half, not double, and maps the hash onto any size by
 * scaling, so memory tracks the count closely.
 */
class Shard {
  private keys: Float64Array;
  private firstLines: Int32Array;
  private used = 0;

  constructor(slots: number) {
    this.keys = new Float64Array(slots);
    this.firstLines = new Int32Array(slots);
  }

  firstLineOf(key: number, hashed: number, line: number): number | undefined {
    if ((this.used + 1) * 4 > this.keys.length * 3) this.grow();
    const slot = slotOf(this.keys, key, hashed);
    if (this.keys[slot] === key) return this.firstLines[slot];
    this.keys[slot] = key;
    this.firstLines[slot] = line;
    this.used++;
    return undefined;
  }

  private grow(): void {
    const keys = new Float64Array(Math.ceil(this.keys.length * 1.5));
    const firstLines = new Int32Array(keys.length);
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (key === 0) continue;
      const slot = slotOf(keys, key, hash(key));
      keys[slot] = key;
      firstLines[slot] = this.firstLines[i]!;
    }
    this.keys = keys;
    this.firstLines = firstLines;
  }
}

/** The slot holding `key`, or the empty slot where it belongs: the hash's low 24 bits scaled onto the table. */
function slotOf(keys: Float64Array, key: number, hashed: number): number {
  const size = keys.length;
  let slot = Math.floor(((hashed & 0xffffff) * size) / 0x1000000);
  while (keys[slot] !== 0 && keys[slot] !== key) if (++slot === size) slot = 0;
  return slot;
}

/** Mixes both halves of the number so nearby numbers spread over the table. */
function hash(key: number): number {
  const low = key >>> 0;
  const high = (key / 4294967296) >>> 0;
  return (Math.imul(low ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1) ^ (low >>> 15)) >>> 0;
}

/** Writes `value` (< 2^31) in decimal at `at`, left-padded with zeros to `width`; returns the end. */
function writeDigits(out: Buffer, at: number, value: number, width: number): number {
  let digits = 1;
  for (let v = value; v >= 10; v = (v / 10) | 0) digits++;
  const length = Math.max(digits, width);
  let v = value | 0;
  for (let i = at + length - 1; i >= at; i--) {
    out[i] = 48 + (v % 10);
    v = (v / 10) | 0;
  }
  return at + length;
}

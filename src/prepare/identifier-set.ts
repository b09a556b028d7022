import type { IdentifierKey } from "./identifier-key.js";

const INITIAL_SLOTS = 1024;
const MAX_LOAD = 0.75;

/**
 * The kept identifiers seen so far, each with the line it was first seen on (a
 * duplicate is reported as "duplicate of line N"). Numeric keys live in one
 * open-addressing table with linear probing: a Float64Array of keys (0 marks an
 * empty slot; no identifier is 0) beside a Uint32Array of lines, 12 bytes a slot,
 * doubled when 3/4 full, so 16–32 bytes a number and no string kept alive. The
 * rare identifiers longer than 15 digits go in a Map.
 */
export class IdentifierSet {
  private keys = new Float64Array(INITIAL_SLOTS);
  private lines = new Uint32Array(INITIAL_SLOTS);
  private numbers = 0;
  private readonly long = new Map<string, number>();

  get size(): number {
    return this.numbers + this.long.size;
  }

  /** Records `key` as first seen on `line` and returns undefined, or returns the line it was first seen on. */
  firstLineOf(key: IdentifierKey, line: number): number | undefined {
    if (typeof key === "string") {
      const first = this.long.get(key);
      if (first === undefined) this.long.set(key, line);
      return first;
    }
    const slot = slotOf(this.keys, key);
    if (this.keys[slot] === key) return this.lines[slot];
    this.keys[slot] = key;
    this.lines[slot] = line;
    if (++this.numbers > this.keys.length * MAX_LOAD) this.grow();
    return undefined;
  }

  private grow(): void {
    const { keys, lines } = this;
    this.keys = new Float64Array(keys.length * 2);
    this.lines = new Uint32Array(keys.length * 2);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (key === 0) continue;
      const slot = slotOf(this.keys, key);
      this.keys[slot] = key;
      this.lines[slot] = lines[i]!;
    }
  }
}

/** The slot holding `key`, or the empty slot where it belongs. The table's size is a power of two. */
function slotOf(keys: Float64Array, key: number): number {
  const mask = keys.length - 1;
  let slot = hash(key) & mask;
  while (keys[slot] !== 0 && keys[slot] !== key) slot = (slot + 1) & mask;
  return slot;
}

/** Both 32-bit halves of the number, mixed by murmur3's finaliser so nearby numbers spread over the table. */
function hash(key: number): number {
  let h = (key >>> 0) ^ Math.imul((key / 4294967296) >>> 0, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

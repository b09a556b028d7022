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
 * 4/5 full, by a quarter, so memory follows the count closely (15–19 bytes a
 * number), and growing happens in place, never holding two copies. The rare
 * longer identifiers go in a Map. First-seen order is not kept here:
 * preparation writes each identifier to the upload file as it first appears.
 */
export class IdentifierIndex {
  private readonly scratch: Scratch;
  private readonly shards: Shard[];
  private readonly long = new Map<string, number>();

  /**
   * `expected`: at most how many identifiers the list can hold, when known (a file's
   * size tells). It sizes the address space each table reserves to grow in place:
   * reserving for the largest list on every run ran a process under `ulimit -v 2G`
   * out of address space. A table that outgrows its reservation moves to a new buffer.
   */
  constructor(expected = UNKNOWN_LIST_IDENTIFIERS) {
    const reserve = reservedShardBytes(expected);
    this.scratch = new Scratch(reserve);
    this.shards = Array.from({ length: SHARDS }, () => new Shard(this.scratch, reserve));
  }

  get size(): number {
    return this.shards.reduce((sum, shard) => sum + shard.count, this.long.size);
  }

  /**
   * Empties the index and gives its memory back now. Otherwise the tables stay
   * resident until V8's next full collection, which may come only after the
   * upload that follows preparation.
   */
  release(): void {
    for (const shard of this.shards) shard.release();
    this.scratch.release();
    this.long.clear();
  }

  /** Records `key` as first seen on `line` and returns undefined, or returns the line it was first seen on. */
  firstLineOf(key: IdentifierKey, line: number): number | undefined {
    if (typeof key === "string") {
      const first = this.long.get(key);
      if (first === undefined) this.long.set(key, line);
      return first;
    }
    const hashed = hash(key);
    return this.shards[hashed >>> SHARD_SHIFT]!.firstLineOf(key, hashed, line);
  }
}

const SHARDS = 256;
const SHARD_SHIFT = 24;
const INITIAL_SHARD_SLOTS = 64;
/** A slot: an 8-byte key and a 4-byte line. */
const SLOT_BYTES = 12;
/** A table grows by a quarter when 4/5 full. */
const GROWTH = 1.25;
const MAX_LOAD = 0.8;
/** Reserved for when a list's size is unknown (stdin): ~16 million numbers, 330 MB of address space. */
const UNKNOWN_LIST_IDENTIFIERS = 16_000_000;
/** The most a table reserves (12 MiB, ~200 million numbers in all); only what is used is committed. */
const MAX_RESERVED_SHARD_BYTES = SLOT_BYTES << 20;

/** Address space for one table of an index of up to `expected` identifiers, with room for an uneven share and the last growth. */
export function reservedShardBytes(expected: number): number {
  const slots = Math.ceil(((expected / SHARDS) * 1.1 * GROWTH) / MAX_LOAD) + INITIAL_SHARD_SLOTS;
  return Math.min(slots * SLOT_BYTES, MAX_RESERVED_SHARD_BYTES);
}

/** Set once the runtime refuses a reservation: asking again only costs a failed allocation each time. */
let reservationsRefused = false;

/**
 * A buffer of `bytes` that can grow in place up to `reserve` bytes, or a fixed one
 * where the runtime refuses the reservation.
 */
export function tableBuffer(bytes: number, reserve: number): ArrayBuffer {
  if (!reservationsRefused) {
    try {
      return new ArrayBuffer(bytes, { maxByteLength: Math.max(bytes, reserve) });
    } catch {
      reservationsRefused = true;
    }
  }
  return new ArrayBuffer(bytes);
}

/**
 * `buffer` grown to `bytes`: the same buffer, resized, while its reservation allows;
 * otherwise a new one with room to grow (the old one is left to the collector). New
 * bytes read as zero either way; old ones keep their content only in place.
 */
export function grownBuffer(buffer: ArrayBuffer, bytes: number, reserve: number): ArrayBuffer {
  if (buffer.resizable && bytes <= buffer.maxByteLength) {
    buffer.resize(bytes);
    return buffer;
  }
  return tableBuffer(bytes, Math.max(reserve, bytes * 4));
}

/**
 * One open-addressing table (linear probing, 0 = empty: an identifier is never
 * 0). It grows by a quarter, not double, and maps the hash onto any size by
 * scaling, so memory tracks the count closely. Growing resizes the table's own
 * buffer in place and reinserts from a copy in the index's shared scratch
 * buffer: every shard fills at about the same time, and fresh
 * tables for each would leave the whole old index as garbage until V8's next
 * full collection (30 MB at 1.6 million numbers).
 */
class Shard {
  private buffer: ArrayBuffer;
  private keys: Float64Array;
  private firstLines: Int32Array;
  private used = 0;

  constructor(
    private readonly scratch: Scratch,
    private readonly reserve: number,
  ) {
    this.buffer = tableBuffer(INITIAL_SHARD_SLOTS * SLOT_BYTES, reserve);
    [this.keys, this.firstLines] = views(this.buffer, INITIAL_SHARD_SLOTS);
  }

  get count(): number {
    return this.used;
  }

  firstLineOf(key: number, hashed: number, line: number): number | undefined {
    if (this.used + 1 > this.keys.length * MAX_LOAD) this.grow();
    const slot = slotOf(this.keys, key, hashed);
    if (this.keys[slot] === key) return this.firstLines[slot];
    this.keys[slot] = key;
    this.firstLines[slot] = line;
    this.used++;
    return undefined;
  }

  /** Empties the table, shrunk to its initial size. */
  release(): void {
    this.buffer = shrunkBuffer(this.buffer, INITIAL_SHARD_SLOTS * SLOT_BYTES);
    [this.keys, this.firstLines] = views(this.buffer, INITIAL_SHARD_SLOTS);
    this.keys.fill(0);
    this.used = 0;
  }

  private grow(): void {
    const oldSlots = this.keys.length;
    const [oldKeys, oldLines] = this.scratch.copyOf(this.buffer, oldSlots);
    const slots = Math.ceil(oldSlots * GROWTH);
    this.buffer = grownBuffer(this.buffer, slots * SLOT_BYTES, this.reserve);
    [this.keys, this.firstLines] = views(this.buffer, slots);
    this.keys.fill(0);
    for (let i = 0; i < oldSlots; i++) {
      const key = oldKeys[i]!;
      if (key === 0) continue;
      const slot = slotOf(this.keys, key, hash(key));
      this.keys[slot] = key;
      this.firstLines[slot] = oldLines[i]!;
    }
  }
}

/** `buffer` cut to `bytes`: the same buffer where it can shrink in place, else a new one. */
function shrunkBuffer(buffer: ArrayBuffer, bytes: number): ArrayBuffer {
  if (!buffer.resizable) return new ArrayBuffer(bytes);
  buffer.resize(bytes);
  return buffer;
}

/** The keys, then the lines, of a table of `slots` in `buffer`. */
function views(buffer: ArrayBuffer, slots: number): [Float64Array, Int32Array] {
  return [new Float64Array(buffer, 0, slots), new Int32Array(buffer, slots * 8, slots)];
}

/** One buffer the shards copy their table into while growing, sized to the largest so far. */
class Scratch {
  private buffer: ArrayBuffer;

  constructor(private readonly reserve: number) {
    this.buffer = tableBuffer(0, reserve);
  }

  release(): void {
    this.buffer = shrunkBuffer(this.buffer, 0);
  }

  /** The table of `slots` in `table`, copied. Valid until the next call. */
  copyOf(table: ArrayBuffer, slots: number): [Float64Array, Int32Array] {
    const bytes = slots * SLOT_BYTES;
    if (this.buffer.byteLength < bytes) this.buffer = grownBuffer(this.buffer, bytes, this.reserve);
    new Uint8Array(this.buffer, 0, bytes).set(new Uint8Array(table, 0, bytes));
    return views(this.buffer, slots);
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

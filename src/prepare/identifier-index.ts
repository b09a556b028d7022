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
 * The kept identifiers seen so far, with the line each was first seen on, in
 * first-seen order: the one structure of preparation that grows with the list.
 *
 * Numeric keys live in an open-addressing table of typed arrays, ~32 bytes a
 * number and no string kept alive (a Map of strings took several times the
 * memory and time on 500k numbers); the rare longer identifiers in a Map.
 */
export class IdentifierIndex {
  private keys = new Float64Array(1 << 12);
  private firstLines = new Int32Array(1 << 12);
  private used = 0;
  /** First-seen order: the number, or -(i + 1) for `longOrder[i]` (an identifier is never negative). */
  private order = new Float64Array(1 << 12);
  private readonly long = new Map<string, number>();
  private readonly longOrder: string[] = [];

  get size(): number {
    return this.used + this.long.size;
  }

  /** Records `key` as first seen on `line` and returns undefined, or returns the line it was first seen on. */
  firstLineOf(key: IdentifierKey, line: number): number | undefined {
    if (typeof key === "string") {
      const first = this.long.get(key);
      if (first !== undefined) return first;
      this.long.set(key, line);
      this.append(-this.longOrder.push(key));
      return undefined;
    }
    if ((this.used + 1) * 2 > this.keys.length) this.grow();
    const slot = this.slotOf(key, this.keys);
    if (this.keys[slot] === key) return this.firstLines[slot];
    this.keys[slot] = key;
    this.firstLines[slot] = line;
    this.used++;
    this.append(key);
    return undefined;
  }

  /**
   * Identifiers [from, to) in first-seen order as ASCII lines ending in `\n`:
   * the bytes of an upload file. Digits are written straight from the numbers,
   * ~10× faster than String(number) and a join.
   */
  lines(from: number, to: number): Buffer {
    let capacity = (to - from) * (MAX_EXACT_DIGITS + 1);
    for (let i = from; i < to; i++) if (this.order[i]! < 0) capacity += this.longOrder[-this.order[i]! - 1]!.length;
    const out = Buffer.allocUnsafe(capacity);
    let at = 0;
    for (let i = from; i < to; i++) {
      const key = this.order[i]!;
      if (key < 0) at += out.write(this.longOrder[-key - 1]!, at, "latin1");
      else {
        // Two exact halves, each small enough for integer arithmetic.
        const high = Math.floor(key / 1e8);
        if (high > 0) at = writeDigits(out, at, high, 0);
        at = writeDigits(out, at, key - high * 1e8, high > 0 ? 8 : 0);
      }
      out[at++] = 10;
    }
    return out.subarray(0, at);
  }

  private append(key: number): void {
    const at = this.size - 1;
    if (at >= this.order.length) {
      const order = new Float64Array(this.order.length * 2);
      order.set(this.order);
      this.order = order;
    }
    this.order[at] = key;
  }

  /** The slot holding `key`, or the empty (0) slot where it belongs; an identifier is never 0. */
  private slotOf(key: number, keys: Float64Array): number {
    const mask = keys.length - 1;
    let slot = hash(key) & mask;
    while (keys[slot] !== 0 && keys[slot] !== key) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const keys = new Float64Array(this.keys.length * 2);
    const firstLines = new Int32Array(this.firstLines.length * 2);
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (key === 0) continue;
      const slot = this.slotOf(key, keys);
      keys[slot] = key;
      firstLines[slot] = this.firstLines[i]!;
    }
    this.keys = keys;
    this.firstLines = firstLines;
  }
}

/** Mixes both halves of the number so nearby numbers spread over the table. */
function hash(key: number): number {
  const low = key >>> 0;
  const high = (key / 4294967296) >>> 0;
  return Math.imul(low ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1) ^ (low >>> 15);
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

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
 * Numeric keys live in an open-addressing table of typed arrays, ~24 bytes a
 * number and no string kept alive (a Map of strings took several times the
 * memory and time on 500k numbers); the rare longer identifiers in a Map.
 */
export class IdentifierIndex {
  private keys = new Float64Array(1 << 12);
  private lines = new Int32Array(1 << 12);
  private used = 0;
  /** First-seen order: the number, or NaN for the next entry of `longOrder`. */
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
      this.longOrder.push(key);
      this.append(Number.NaN);
      return undefined;
    }
    if ((this.used + 1) * 2 > this.keys.length) this.grow();
    const slot = this.slotOf(key, this.keys);
    if (this.keys[slot] === key) return this.lines[slot];
    this.keys[slot] = key;
    this.lines[slot] = line;
    this.used++;
    this.append(key);
    return undefined;
  }

  /** Every identifier in first-seen order. */
  *identifiers(): Generator<string, void, undefined> {
    let long = 0;
    const count = this.size;
    for (let i = 0; i < count; i++) {
      const key = this.order[i]!;
      yield Number.isNaN(key) ? this.longOrder[long++]! : String(key);
    }
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
    const lines = new Int32Array(this.lines.length * 2);
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (key === 0) continue;
      const slot = this.slotOf(key, keys);
      keys[slot] = key;
      lines[slot] = this.lines[i]!;
    }
    this.keys = keys;
    this.lines = lines;
  }
}

/** Mixes both halves of the number so nearby numbers spread over the table. */
function hash(key: number): number {
  const low = key >>> 0;
  const high = (key / 4294967296) >>> 0;
  return Math.imul(low ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1) ^ (low >>> 15);
}

import type { IdentifierKey } from "./identifier-key.js";

const INITIAL_SIZE = 1024;
const MAX_LOAD = 0.75;

/**
 * The kept identifiers seen so far, each with the line it was first seen on (a
 * duplicate is reported as "duplicate of line N"), and no string kept alive.
 *
 * Numbers are entries in two typed arrays side by side, in first-seen order: `keys`
 * (every 15-digit number is exact in a double) and `lines`, 12 bytes an entry, doubled
 * when full. One open-addressing table of 4-byte slots (linear probing; a slot holds
 * its entry's index + 1, 0 when empty), doubled when 3/4 full, finds a number's entry.
 * The table's empty slots then cost 4 bytes rather than 12, and the two parts grow at
 * different counts: `validate` of 1.6 million numbers peaked at ~140 MB instead of
 * ~195 MB with the key and line in the slot. The rare longer identifiers go in a Map.
 */
export class IdentifierSet {
  private slots = new Int32Array(INITIAL_SIZE);
  private keys = new Float64Array(INITIAL_SIZE);
  private lines = new Uint32Array(INITIAL_SIZE);
  private numbers = 0;
  private readonly long = new Map<string, number>();

  get size(): number {
    return this.numbers + this.long.size;
  }

  /** The line `key` was first seen on, or undefined when it has not been. */
  get(key: IdentifierKey): number | undefined {
    if (typeof key === "string") return this.long.get(key);
    const mask = this.slots.length - 1;
    for (let slot = hash(key) & mask, entry = this.slots[slot]!; entry !== 0; slot = (slot + 1) & mask, entry = this.slots[slot]!) {
      if (this.keys[entry - 1] === key) return this.lines[entry - 1];
    }
    return undefined;
  }

  /** Whether `key` has been recorded. */
  has(key: IdentifierKey): boolean {
    return this.get(key) !== undefined;
  }

  /** Records `key` as first seen on `line` and returns undefined, or returns the line it was first seen on. */
  firstLineOf(key: IdentifierKey, line: number): number | undefined {
    return this.record(key, line, false);
  }

  /** Records `key` with `value`, replacing what it had. */
  set(key: IdentifierKey, value: number): void {
    this.record(key, value, true);
  }

  /** Records `key` with `value` when it is new (or `replace` says so); returns what it had. */
  private record(key: IdentifierKey, value: number, replace: boolean): number | undefined {
    if (typeof key === "string") {
      const first = this.long.get(key);
      if (first === undefined || replace) this.long.set(key, value);
      return first;
    }
    const mask = this.slots.length - 1;
    let slot = hash(key) & mask;
    for (let entry = this.slots[slot]!; entry !== 0; entry = this.slots[slot]!) {
      if (this.keys[entry - 1] === key) {
        const had = this.lines[entry - 1];
        if (replace) this.lines[entry - 1] = value;
        return had;
      }
      slot = (slot + 1) & mask;
    }
    if (this.numbers === this.keys.length) this.growEntries();
    this.keys[this.numbers] = key;
    this.lines[this.numbers] = value;
    this.slots[slot] = ++this.numbers;
    if (this.numbers > this.slots.length * MAX_LOAD) this.growSlots();
    return undefined;
  }

  private growEntries(): void {
    const keys = new Float64Array(this.keys.length * 2);
    const lines = new Uint32Array(this.lines.length * 2);
    keys.set(this.keys);
    lines.set(this.lines);
    [this.keys, this.lines] = [keys, lines];
  }

  private growSlots(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let entry = 1; entry <= this.numbers; entry++) {
      let slot = hash(this.keys[entry - 1]!) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry;
    }
    this.slots = slots;
  }
}

/** Both 32-bit halves of the number, mixed by murmur3's finaliser so nearby numbers spread over the table. */
function hash(key: number): number {
  let h = (key >>> 0) ^ Math.imul((key / 4294967296) >>> 0, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

import { isCarrierProduct, type ServiceType } from "../spec/products.js";

/** Rows whose `activated` is exactly `true`, exactly `false`, or anything else (empty, a typo). */
export interface SignalCounts {
  true: number;
  false: number;
  other: number;
}

export interface ValueCount {
  /** The value as sent; "" when the service left it empty. */
  value: string;
  count: number;
}

export interface CarrierCounts {
  topCarriers: ValueCount[];
  topNumberTypes: ValueCount[];
}

export interface Tally {
  rows: number;
  signal?: SignalCounts;
  carrier?: CarrierCounts;
}

/**
 * Distinct values counted per column before the rest fold into OTHER_VALUES. Real
 * carrier and line-type names number in the thousands at most; the cap keeps memory
 * flat when a broken file has a different value on every row.
 */
const MAX_DISTINCT = 10_000;
export const OTHER_VALUES = "(other values)";

/** Output column positions: the output always starts with the spec's columns in the spec's order. */
const ACTIVATED = 1;
const CARRIER = 1;
const NUMBER_TYPE = 3;

function bump(counts: Map<string, number>, value: string): void {
  const key = counts.has(value) || counts.size < MAX_DISTINCT ? value : OTHER_VALUES;
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** The `limit` most frequent values, most frequent first, ties by value. */
export function topValues(counts: ReadonlyMap<string, number>, limit: number): ValueCount[] {
  return [...counts]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, limit);
}

/**
 * Counts data rows as they stream past (header excluded): for signal products the
 * `true`/`false` split, for the carrier product carriers and number types.
 */
export class RowTally {
  #rows = 0;
  readonly #signal: SignalCounts | undefined;
  readonly #carriers = new Map<string, number>();
  readonly #numberTypes = new Map<string, number>();

  constructor(
    readonly serviceType: ServiceType,
    readonly topLimit = 10,
  ) {
    this.#signal = isCarrierProduct(serviceType) ? undefined : { true: 0, false: 0, other: 0 };
  }

  add(row: readonly string[]): void {
    this.#rows += 1;
    if (this.#signal) {
      const value = row[ACTIVATED];
      if (value === "true") this.#signal.true += 1;
      else if (value === "false") this.#signal.false += 1;
      else this.#signal.other += 1;
      return;
    }
    bump(this.#carriers, row[CARRIER] ?? "");
    bump(this.#numberTypes, row[NUMBER_TYPE] ?? "");
  }

  result(): Tally {
    if (this.#signal) return { rows: this.#rows, signal: { ...this.#signal } };
    return {
      rows: this.#rows,
      carrier: {
        topCarriers: topValues(this.#carriers, this.topLimit),
        topNumberTypes: topValues(this.#numberTypes, this.topLimit),
      },
    };
  }
}

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
const SIGNAL_TALLIED: readonly number[] = [1]; // activated
const CARRIER_TALLIED: readonly number[] = [1, 3]; // carrier, number_type

/** Adds `n` rows of `value`. A value's bucket is fixed when it first appears, so adding n at once equals n single adds. */
function bump(counts: Map<string, number>, value: string, n: number): void {
  const current = counts.get(value);
  if (current !== undefined) counts.set(value, current + n);
  else if (counts.size < MAX_DISTINCT) counts.set(value, n);
  else counts.set(OTHER_VALUES, (counts.get(OTHER_VALUES) ?? 0) + n);
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
  /**
   * The output columns a row is counted by (`activated`, or `carrier` and
   * `number_type`), so a caller holding raw CSV text can cut out just these.
   */
  readonly columns: readonly number[];
  #rows = 0;
  readonly #signal: SignalCounts | undefined;
  readonly #carriers = new Map<string, number>();
  readonly #numberTypes = new Map<string, number>();

  constructor(
    readonly serviceType: ServiceType,
    readonly topLimit = 10,
  ) {
    const carrier = isCarrierProduct(serviceType);
    this.#signal = carrier ? undefined : { true: 0, false: 0, other: 0 };
    this.columns = carrier ? CARRIER_TALLIED : SIGNAL_TALLIED;
  }

  /** Counts one data row, given in output column order; a short row's missing fields count as empty. */
  add(row: readonly string[]): void {
    this.addValues(this.columns.map((column) => row[column] ?? ""));
  }

  /** Counts `n` data rows (default one) given only the values of `columns`, in that order. */
  addValues(values: readonly string[], n = 1): void {
    this.#rows += n;
    if (this.#signal) {
      const value = values[0];
      if (value === "true") this.#signal.true += n;
      else if (value === "false") this.#signal.false += n;
      else this.#signal.other += n;
      return;
    }
    bump(this.#carriers, values[0] ?? "", n);
    bump(this.#numberTypes, values[1] ?? "", n);
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

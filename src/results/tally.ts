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

/**
 * Counts one row of `value`; once MAX_DISTINCT values are known, a new one counts under
 * OTHER_VALUES. Each count is an object changed in place: one lookup a row, not two.
 */
function bump(counts: Map<string, ValueCount>, value: string): void {
  const known = counts.get(value);
  if (known) {
    known.count += 1;
    return;
  }
  const key = counts.size < MAX_DISTINCT ? value : OTHER_VALUES;
  const other = counts.get(key);
  if (other) other.count += 1;
  else counts.set(key, { value: key, count: 1 });
}

/** The `limit` most frequent values, most frequent first, ties by value. */
export function topValues(counts: Iterable<ValueCount>, limit: number): ValueCount[] {
  return [...counts]
    .map(({ value, count }) => ({ value, count }))
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
   * `number_type`), ascending, so a caller holding CSV text can cut out just these.
   */
  readonly columns: readonly number[];
  #rows = 0;
  readonly #signal: SignalCounts | undefined;
  readonly #carriers = new Map<string, ValueCount>();
  readonly #numberTypes = new Map<string, ValueCount>();

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

  /** Counts one data row given only the values of `columns`, in that order. */
  addValues(values: readonly string[]): void {
    this.#rows += 1;
    if (this.#signal) {
      const value = values[0];
      if (value === "true") this.#signal.true += 1;
      else if (value === "false") this.#signal.false += 1;
      else this.#signal.other += 1;
      return;
    }
    bump(this.#carriers, values[0] ?? "");
    bump(this.#numberTypes, values[1] ?? "");
  }

  result(): Tally {
    if (this.#signal) return { rows: this.#rows, signal: { ...this.#signal } };
    return {
      rows: this.#rows,
      carrier: {
        topCarriers: topValues(this.#carriers.values(), this.topLimit),
        topNumberTypes: topValues(this.#numberTypes.values(), this.topLimit),
      },
    };
  }
}

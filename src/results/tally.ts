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

/** Rows whose carrier and underlying carrier are both named and differ (a ported number, or a brand on another network). */
export interface CarrierDifferences {
  /** All such rows. */
  rows: number;
  /** The most frequent pairs. */
  top: Array<{ carrier: string; underlyingCarrier: string; count: number }>;
}

export interface CarrierCounts {
  topCarriers: ValueCount[];
  topNumberTypes: ValueCount[];
  topRegions: ValueCount[];
  differences: CarrierDifferences;
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
const CARRIER_TALLIED: readonly number[] = [1, 2, 3, 5]; // carrier, underlying_carrier, number_type, region

/**
 * Counts one row of `key`; once MAX_DISTINCT keys are known, a new one counts under
 * OTHER_VALUES. Each count is an object changed in place: one lookup a row, not two.
 */
function bump<T extends { count: number }>(counts: Map<string, T>, key: string, create: (key: string) => T): void {
  const known = counts.get(key);
  if (known) {
    known.count += 1;
    return;
  }
  const slot = counts.size < MAX_DISTINCT ? key : OTHER_VALUES;
  const other = counts.get(slot);
  if (other) other.count += 1;
  else counts.set(slot, create(slot));
}

const valueCount = (value: string): ValueCount => ({ value, count: 1 });

/** Orders by count, most first, then by `key` so ties come out the same every time. */
function byCount<T extends { count: number }>(key: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => b.count - a.count || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}

/** The `limit` most frequent values, most frequent first, ties by value. */
export function topValues(counts: Iterable<ValueCount>, limit: number): ValueCount[] {
  return [...counts]
    .map(({ value, count }) => ({ value, count }))
    .sort(byCount((item) => item.value))
    .slice(0, limit);
}

type PairCount = CarrierDifferences["top"][number];

/**
 * Counts data rows as they stream past (header excluded): for signal products the
 * `true`/`false` split (overall and per source), for the carrier product carriers,
 * number types, regions and the rows whose carrier differs from the underlying one.
 */
export class RowTally {
  /**
   * The output columns a row is counted by (`activated`, or `carrier`,
   * `underlying_carrier`, `number_type` and `region`), ascending, so a caller holding
   * CSV text can cut out just these.
   */
  readonly columns: readonly number[];
  #rows = 0;
  readonly #signal: SignalCounts | undefined;
  #sourceSignal: SignalCounts | undefined;
  readonly #carriers = new Map<string, ValueCount>();
  readonly #numberTypes = new Map<string, ValueCount>();
  readonly #regions = new Map<string, ValueCount>();
  readonly #pairs = new Map<string, PairCount>();
  #differing = 0;

  constructor(
    readonly serviceType: ServiceType,
    readonly topLimit = 10,
  ) {
    const carrier = isCarrierProduct(serviceType);
    this.#signal = carrier ? undefined : emptySignal();
    this.columns = carrier ? CARRIER_TALLIED : SIGNAL_TALLIED;
  }

  /**
   * Starts counting a new source (a task's result): for a signal product, returns the
   * source's own true/false counts, which fill in as its rows are added.
   */
  beginSource(): SignalCounts | undefined {
    this.#sourceSignal = this.#signal ? emptySignal() : undefined;
    return this.#sourceSignal;
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
      const key = value === "true" ? "true" : value === "false" ? "false" : "other";
      this.#signal[key] += 1;
      if (this.#sourceSignal) this.#sourceSignal[key] += 1;
      return;
    }
    const [carrier = "", underlying = "", numberType = "", region = ""] = values;
    bump(this.#carriers, carrier, valueCount);
    bump(this.#numberTypes, numberType, valueCount);
    bump(this.#regions, region, valueCount);
    if (carrier !== "" && underlying !== "" && carrier !== underlying) {
      this.#differing += 1;
      bump(this.#pairs, JSON.stringify([carrier, underlying]), (slot) =>
        slot === OTHER_VALUES
          ? { carrier: OTHER_VALUES, underlyingCarrier: OTHER_VALUES, count: 1 }
          : { carrier, underlyingCarrier: underlying, count: 1 },
      );
    }
  }

  result(): Tally {
    if (this.#signal) return { rows: this.#rows, signal: { ...this.#signal } };
    return {
      rows: this.#rows,
      carrier: {
        topCarriers: topValues(this.#carriers.values(), this.topLimit),
        topNumberTypes: topValues(this.#numberTypes.values(), this.topLimit),
        topRegions: topValues(this.#regions.values(), this.topLimit),
        differences: {
          rows: this.#differing,
          top: [...this.#pairs.values()]
            .map((pair) => ({ ...pair }))
            .sort(byCount((pair) => JSON.stringify([pair.carrier, pair.underlyingCarrier])))
            .slice(0, this.topLimit),
        },
      },
    };
  }
}

function emptySignal(): SignalCounts {
  return { true: 0, false: 0, other: 0 };
}

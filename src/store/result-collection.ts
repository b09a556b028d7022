import { identifierNumber, splitValues } from "./result-values.js";
import type { KeyOrderedResults, StoredValue } from "./store.js";

/** Rows the arrays start with; they double as they fill. */
const INITIAL_ROWS = 4096;

/**
 * A task's result rows held in memory until they are recorded, then handed out in number
 * order (the ledger's key order: inserted so, every row lands at the end of both B-trees of
 * `results`, which is what makes recording fast; see record-worker.ts).
 *
 * A row is kept as its number (a float64) and the index of its values among the distinct
 * value tuples met so far (a uint32): results repeat their values (a few carriers, types
 * and regions), so each distinct tuple is split into stored columns (splitValues) and kept
 * once. That is 12 bytes a row, plus a 4-byte sort order: about 16 MB per million rows,
 * instead of an object and an array per row.
 */
export class ResultCollection implements KeyOrderedResults {
  #identifiers = new Float64Array(INITIAL_ROWS);
  #tuples = new Uint32Array(INITIAL_ROWS);
  #size = 0;
  /** Row positions in number order, once sorted. */
  #order: Uint32Array | undefined;
  /** Whether the rows came in number order (a list sorted by number gives its result so): then none need sorting. */
  #inOrder = true;
  /** Each distinct tuple of stored values, and its index by the row's values joined with NULs (those without a NUL in any value). */
  readonly #values: (readonly StoredValue[])[] = [];
  readonly #byText = new Map<string, number>();
  /** Rows with a NUL in a value, whose joined text could be another row's: indexed by their JSON instead. */
  readonly #byJson = new Map<string, number>();
  readonly #split: (values: readonly string[]) => StoredValue[];

  /** `columns`: the result's columns after `identifier`, in the order its rows give their values. */
  constructor(readonly columns: readonly string[]) {
    this.#split = splitValues(columns);
  }

  /** Rows held. */
  get size(): number {
    return this.#size;
  }

  /**
   * Holds a data row: its identifier first, then its values in `columns` order. A row whose
   * identifier is no E.164 number's digits is not kept (the ledger keys results by number).
   */
  add(row: readonly string[]): void {
    const identifier = identifierNumber(row[0] ?? "");
    if (identifier === undefined) return;
    if (this.#size === this.#identifiers.length) this.#grow();
    if (this.#size > 0 && identifier < this.#identifiers[this.#size - 1]!) this.#inOrder = false;
    this.#identifiers[this.#size] = identifier;
    this.#tuples[this.#size] = this.#tupleOf(row);
    this.#size++;
    this.#order = undefined;
  }

  /** The number of the `position`th row in number order. */
  identifierAt(position: number): number {
    return this.#identifiers[this.#sorted()[position]!]!;
  }

  /** The stored values of the `position`th row in number order (shared by every row with the same values: not to be changed). */
  valuesAt(position: number): readonly StoredValue[] {
    return this.#values[this.#tuples[this.#sorted()[position]!]!]!;
  }

  /** Distinct value tuples held. */
  get distinctValues(): number {
    return this.#values.length;
  }

  #tupleOf(row: readonly string[]): number {
    let text = "";
    let nul = false;
    for (let at = 1; at < row.length; at++) {
      const value = row[at]!;
      if (value.includes("\0")) nul = true;
      text += at === 1 ? value : `\0${value}`;
    }
    const index = nul ? this.#byJson : this.#byText;
    const key = nul ? JSON.stringify(row.slice(1)) : text;
    let tuple = index.get(key);
    if (tuple === undefined) {
      tuple = this.#values.length;
      this.#values.push(this.#split(row.slice(1)));
      index.set(key, tuple);
    }
    return tuple;
  }

  #grow(): void {
    const identifiers = new Float64Array(this.#identifiers.length * 2);
    identifiers.set(this.#identifiers);
    this.#identifiers = identifiers;
    const tuples = new Uint32Array(this.#tuples.length * 2);
    tuples.set(this.#tuples);
    this.#tuples = tuples;
  }

  #sorted(): Uint32Array {
    if (this.#order) return this.#order;
    const order = new Uint32Array(this.#size);
    for (let at = 0; at < order.length; at++) order[at] = at;
    if (this.#inOrder) return (this.#order = order);
    const identifiers = this.#identifiers;
    // Ties (a number twice in a result, which the rules refuse elsewhere) keep their order: sort is stable.
    order.sort((a, b) => identifiers[a]! - identifiers[b]!);
    this.#order = order;
    return order;
  }
}

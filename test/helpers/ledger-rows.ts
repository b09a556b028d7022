import { ResultCollection } from "../../src/store/result-collection.js";
import type { KeyOrderedResults, Ledger } from "../../src/store/store.js";

/** A result row as a test writes it: the identifier (digits with the country code) and the values of the result's other columns. */
export interface TestRow {
  identifier: string;
  values: readonly string[];
}

/** Rows as Ledger.record takes them (a download's recording collects them so). */
export function keyOrdered(columns: readonly string[], rows: readonly TestRow[]): ResultCollection {
  const collection = new ResultCollection(columns);
  for (const row of rows) collection.add([row.identifier, ...row.values]);
  return collection;
}

/** Records these rows as a task's result, checked at `at`. */
export function recordRows(
  ledger: Pick<Ledger, "record">,
  taskRef: number,
  columns: readonly string[],
  rows: readonly TestRow[],
  at: string,
) {
  return ledger.record(taskRef, keyOrdered(columns, rows), at);
}

/** The same rows, but a recording of them stops at `position` as a killed one would: reading that row throws. */
export function cutShortAt(rows: KeyOrderedResults, position: number): KeyOrderedResults {
  return {
    columns: rows.columns,
    size: rows.size,
    valuesAt: (at) => rows.valuesAt(at),
    identifierAt: (at) => {
      if (at >= position) throw new Error(`killed at row ${position}`);
      return rows.identifierAt(at);
    },
  };
}

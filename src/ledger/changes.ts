import type { LedgerRow, Store } from "../store/store.js";

/** The header of a changes file: one row per number and column whose result changed. */
export const CHANGE_COLUMNS = ["identifier", "column", "previous", "current", "previous_checked_at", "checked_at"] as const;

/** How many transitions of a column a summary keeps by name; the rest are counted together. */
const TOP_TRANSITIONS = 10;

/** What changed in one column: how many numbers, and the most common transitions (`true → false`). */
export interface ColumnChanges {
  column: string;
  numbers: number;
  transitions: Array<{ previous: string; current: string; count: number }>;
}

/** The list itself compared with its previous check: numbers in it now and not then, and the reverse. */
export interface ListChanges {
  appeared: number;
  left: number;
  /** The run that was that check, and when it ended. */
  since: { run: string; checkedAt: string };
}

export interface ChangesSummary {
  /** Numbers with at least one changed column. */
  numbers: number;
  /** Numbers compared: those with an earlier result. */
  compared: number;
  columns: ColumnChanges[];
  /** Absent when no previous check of the whole list is known (see run/list-changes.ts). */
  list?: ListChanges;
}

/** Whether anything changed: a result, or a number that appeared in the list or left it. */
export function anythingChanged(summary: ChangesSummary): boolean {
  return summary.numbers > 0 || (summary.list !== undefined && summary.list.appeared + summary.list.left > 0);
}

/**
 * The changes of a run's results against the ledger: for every result of `taskRefs`
 * whose number had an earlier result (same product and scope), one row per column whose
 * value differs, in the result's column order. Numbers checked for the first time are
 * not changes. Yields the table: header first, then rows in batches.
 */
export async function* changesTable(store: Store, taskRefs: readonly number[], summary?: ChangesTally): AsyncGenerator<readonly string[]> {
  yield CHANGE_COLUMNS;
  for (const ref of taskRefs) {
    for await (const pairs of store.ledger.previous(ref)) {
      for (const { current, previous } of pairs) {
        const rows = changedColumns(current, previous);
        summary?.add(rows);
        yield* rows;
      }
    }
  }
}

/** One change row per column whose value differs between the two results of a number. */
function changedColumns(current: LedgerRow, previous: LedgerRow): string[][] {
  const columns = [...new Set([...Object.keys(current.values), ...Object.keys(previous.values)])];
  return columns.flatMap((column) => {
    const [before, after] = [previous.values[column] ?? "", current.values[column] ?? ""];
    return before === after ? [] : [[current.identifier, column, before, after, previous.checkedAt, current.checkedAt]];
  });
}

/**
 * The changes of several products' results of one list (a chain) as one summary: each product's
 * columns named as its output names them (`prefix` + column), its numbers and comparisons added
 * (a number counts once per product), the list's own changes the first product's.
 */
export function combinedChanges(products: ReadonlyArray<{ summary: ChangesSummary; prefix: string }>): ChangesSummary {
  const list = products[0]?.summary.list;
  return {
    numbers: products.reduce((sum, { summary }) => sum + summary.numbers, 0),
    compared: products.reduce((sum, { summary }) => sum + summary.compared, 0),
    columns: products.flatMap(({ summary, prefix }) => summary.columns.map((column) => ({ ...column, column: prefix + column.column }))),
    ...(list ? { list } : {}),
  };
}

/** Counts change rows as they are written, for the run's summary and the report. */
export class ChangesTally {
  #numbers = 0;
  #compared = 0;
  #list: ListChanges | undefined;
  readonly #byColumn = new Map<string, Map<string, number>>();

  /** The list compared with its previous check. */
  addList(list: ListChanges): void {
    this.#list = list;
  }

  /** The change rows of one compared number (none when nothing changed). */
  add(rows: readonly (readonly string[])[]): void {
    this.#compared++;
    if (rows.length === 0) return;
    this.#numbers++;
    for (const [, column, previous, current] of rows) {
      const transitions = this.#byColumn.get(column!) ?? new Map<string, number>();
      const key = JSON.stringify([previous, current]);
      transitions.set(key, (transitions.get(key) ?? 0) + 1);
      this.#byColumn.set(column!, transitions);
    }
  }

  summary(): ChangesSummary {
    const columns = [...this.#byColumn].map(([column, transitions]) => {
      const sorted = [...transitions].sort(([, a], [, b]) => b - a);
      return {
        column,
        numbers: sorted.reduce((sum, [, count]) => sum + count, 0),
        transitions: sorted.slice(0, TOP_TRANSITIONS).map(([key, count]) => {
          const [previous, current] = JSON.parse(key) as [string, string];
          return { previous, current, count };
        }),
      };
    });
    return { numbers: this.#numbers, compared: this.#compared, columns, ...(this.#list ? { list: this.#list } : {}) };
  }
}

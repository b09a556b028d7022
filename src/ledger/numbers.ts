import type { CountryCode } from "libphonenumber-js/max";
import { classifyCell } from "../prepare/classify.js";
import { CARRIER_COLUMNS, SIGNAL_COLUMNS } from "../spec/products.js";
import type { LedgerRow } from "../store/store.js";

/** Numbers as a user typed them, read into identifiers the way `validate` reads a list. */
export interface ReadNumbers {
  identifiers: string[];
  /** What could not be read as a phone number, as typed. */
  unreadable: string[];
}

/**
 * Reads phone numbers in any written form (`+44 7400 123456`, `0044…`, `07400 123456`
 * with `country`, the service's own `447400123456`) into identifiers, as preparation
 * does: valid numbers of every country are kept, and `country` is the one numbers
 * written nationally belong to.
 */
export function readNumbers(inputs: readonly string[], country?: CountryCode): ReadNumbers {
  const identifiers = new Set<string>();
  const unreadable: string[] = [];
  for (const input of inputs) {
    const cell = classifyCell(input, { ...(country ? { country } : {}), anyRegion: true, digitsAs: "international" });
    if (cell.identifier !== undefined && cell.class !== "invalid") identifiers.add(cell.identifier);
    else unreadable.push(input);
  }
  return { identifiers: [...identifiers], unreadable };
}

/** The columns of a ledger table: where each result came from, then every product's result columns. */
export const LEDGER_COLUMNS = [
  "identifier",
  "product",
  "checked_at",
  "task_id",
  "base_url",
  "profile",
  ...new Set([...SIGNAL_COLUMNS.slice(1), ...CARRIER_COLUMNS.slice(1)]),
] as const;

/** Ledger rows as a table (header first), columns the service added after the known ones, in the order they first appear. */
export async function* ledgerTable(batches: AsyncIterable<readonly LedgerRow[]>, extra: readonly string[] = []): AsyncGenerator<string[]> {
  const columns = [...LEDGER_COLUMNS, ...extra];
  yield columns;
  for await (const batch of batches) {
    for (const row of batch) {
      const fixed = [row.identifier, row.product, row.checkedAt, row.taskId ?? "", row.scope.baseUrl, row.scope.profile];
      yield [...fixed, ...columns.slice(fixed.length).map((column) => row.values[column] ?? "")];
    }
  }
}

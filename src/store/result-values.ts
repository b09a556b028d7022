import type { ColumnValue } from "./store.js";
import { RESULT_VALUE_COLUMNS } from "./sqlite-schema.js";

/** An identifier as the ledger stores it: digits with the country code, no leading zero, at most 15 digits (E.164). */
export const STORED_IDENTIFIER = /^[1-9]\d{0,14}$/;

/** The identifier as the integer the ledger keys it by, or undefined for what is not an E.164 number's digits. */
export function identifierNumber(identifier: string): number | undefined {
  return STORED_IDENTIFIER.test(identifier) ? Number(identifier) : undefined;
}

/** A value column, or NULL for a column the task's result does not have. */
type StoredValue = string | null;

/**
 * How a task's values (in the order of `columns`, the result's columns after
 * `identifier`) are stored: one value per known column (NULL where the result has no
 * such column), then the other columns the service sent as one JSON object, or NULL.
 */
export function splitValues(columns: readonly string[]): (values: readonly string[]) => StoredValue[] {
  const known = RESULT_VALUE_COLUMNS.map((name) => columns.indexOf(name));
  const extra = columns.flatMap((name, index) =>
    (RESULT_VALUE_COLUMNS as readonly string[]).includes(name) ? [] : [[name, index] as const],
  );
  return (values) => {
    const stored: StoredValue[] = known.map((index) => (index === -1 ? null : (values[index] ?? "")));
    stored.push(extra.length === 0 ? null : JSON.stringify(Object.fromEntries(extra.map(([name, index]) => [name, values[index] ?? ""]))));
    return stored;
  };
}

/** A stored row's values by column name, for the task's `columns`; the inverse of splitValues. */
export function rowValues(columns: readonly string[], stored: readonly ColumnValue[], extra: string | undefined): Record<string, string> {
  const extras = extra === undefined ? {} : (JSON.parse(extra) as Record<string, string>);
  const values: Record<string, string> = {};
  for (const name of columns) {
    const known = (RESULT_VALUE_COLUMNS as readonly string[]).indexOf(name);
    const value = known === -1 ? extras[name] : stored[known];
    values[name] = value === null || value === undefined ? "" : String(value);
  }
  return values;
}

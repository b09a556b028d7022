import type { ColumnValue, StoredValue } from "./store.js";

/** The result columns the ledger keeps in columns of their own; any other column the service sends goes into `extra` (JSON). */
export const RESULT_VALUE_COLUMNS = [
  "activated",
  "carrier",
  "underlying_carrier",
  "number_type",
  "country_code",
  "region",
  "city",
] as const;

/** An identifier as the ledger stores it: digits with the country code, no leading zero, at most 15 digits (E.164). */
export const STORED_IDENTIFIER = /^[1-9]\d{0,14}$/;

/** The identifier as the integer the ledger keys it by, or undefined for what is not an E.164 number's digits. */
export function identifierNumber(identifier: string): number | undefined {
  return STORED_IDENTIFIER.test(identifier) ? Number(identifier) : undefined;
}

/**
 * How a task's values (in the order of `columns`, the result's columns after
 * `identifier`) are stored: one value per known column (NULL where the result has no
 * such column), then the other columns the service sent as one JSON object, or NULL.
 *
 * A value holding a NUL character goes into that JSON object too (as `\u0000`), its column
 * left NULL: neither engine keeps it as text. SQLite stores it, but libsql reads text up to
 * its first NUL (`nul\0byte` came back as `nul`), and PostgreSQL refuses the whole batch
 * (text may not hold one), whereas JSON text in either engine holds it escaped.
 */
export function splitValues(columns: readonly string[]): (values: readonly string[]) => StoredValue[] {
  const known = RESULT_VALUE_COLUMNS.map((name) => columns.indexOf(name));
  const extra = columns.flatMap((name, index) =>
    (RESULT_VALUE_COLUMNS as readonly string[]).includes(name) ? [] : [[name, index] as const],
  );
  return (values) => {
    const stored: StoredValue[] = known.map((index) => (index === -1 ? null : (values[index] ?? "")));
    let extras: Array<readonly [string, number]> = extra;
    for (let at = 0; at < stored.length; at++) {
      if (!stored[at]?.includes("\0")) continue;
      extras = [...extras, [RESULT_VALUE_COLUMNS[at]!, known[at]!]];
      stored[at] = null;
    }
    stored.push(
      extras.length === 0 ? null : JSON.stringify(Object.fromEntries(extras.map(([name, index]) => [name, values[index] ?? ""]))),
    );
    return stored;
  };
}

/** A stored row's values by column name, for the task's `columns`; the inverse of splitValues. */
export function rowValues(columns: readonly string[], stored: readonly ColumnValue[], extra: string | undefined): Record<string, string> {
  const extras = extra === undefined ? {} : (JSON.parse(extra) as Record<string, string>);
  const values: Record<string, string> = {};
  for (const name of columns) {
    const known = (RESULT_VALUE_COLUMNS as readonly string[]).indexOf(name);
    const value = known === -1 || Object.hasOwn(extras, name) ? extras[name] : stored[known];
    values[name] = value === null || value === undefined ? "" : String(value);
  }
  return values;
}

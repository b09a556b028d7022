/**
 * A result table travels in parts rather than row by row, so per-row overhead is paid
 * once per batch. The first part is always the output header alone, as `rows`.
 */

/** Rows as fields, in output column order. */
export interface RowsPart {
  rows: readonly (readonly string[])[];
}

/** Data rows as CSV text already in output form, exactly as `delimitedLine` would write them (the fast case, copyPlainLines). */
export interface CsvPart {
  csv: string;
}

export type TablePart = RowsPart | CsvPart;

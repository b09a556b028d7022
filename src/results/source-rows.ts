import { count } from "../format-count.js";
import type { ServiceType } from "../spec/products.js";
import { ResultFileError } from "./errors.js";
import { arrangeRow, outputColumns, projection, sourceLayout } from "./header.js";
import type { SourceSummary } from "./result-table.js";
import type { ResultRowRules } from "./result-rules.js";
import type { RowTally } from "./tally.js";

/** How one source's records map onto the output. */
export interface RowShape {
  /** Whether the first record is a header (and so not a data row). */
  hasHeader: boolean;
  /** For each output column, the index of the source field it comes from, or -1. */
  indexes: readonly number[];
  /** Fields in the source's first record; no data row may have more. */
  width: number;
}

/** The table's output header, fixed by the first source that has any record. */
export interface OutputHeader {
  columns?: readonly string[];
}

/**
 * Reads a source's layout from its first record into `summary`, and fixes the
 * output header when no earlier source did.
 * @returns the shape, and the header when this call fixed it (the caller writes it first).
 * @throws ResultFileError `HEADER_NO_IDENTIFIER` or `COLUMNS_DIFFER`.
 */
export function adoptFirstRecord(
  first: readonly string[],
  summary: SourceSummary,
  header: OutputHeader,
  serviceType: ServiceType,
): { shape: RowShape; fixedHeader?: readonly string[] } {
  const layout = sourceLayout(first, serviceType);
  summary.hasHeader = layout.hasHeader;
  summary.missingColumns = layout.missing;
  summary.extraColumns = layout.extras;
  const fixedHeader = header.columns ? undefined : outputColumns(layout, serviceType);
  header.columns ??= fixedHeader;
  const shape = { hasHeader: layout.hasHeader, indexes: projection(layout.columns, header.columns!), width: layout.columns.length };
  return fixedHeader ? { shape, fixedHeader } : { shape };
}

/** Whether a source's fields already are the output's columns, in order: its rows need no rearranging. */
export function isIdentity(shape: RowShape): boolean {
  return shape.indexes.length === shape.width && shape.indexes.every((source, output) => source === output);
}

/**
 * Checks (its width, and the rules of result-rules.ts), counts, tallies and arranges
 * the data rows of one source, in order. Both the general path (parsed records) and
 * the fast case (plain lines read by their commas, see copyPlainLines) go through
 * here, so they count and fail alike. The identifier is the output's first column.
 */
export class SourceRows {
  /** The output columns a row is tallied by (RowTally.columns), ascending; none without a tally. */
  readonly tallied: readonly number[];

  constructor(
    readonly label: string,
    readonly shape: RowShape,
    readonly summary: SourceSummary,
    private readonly rules: ResultRowRules,
    private readonly tally?: RowTally,
  ) {
    this.tallied = tally?.columns ?? [];
  }

  /**
   * A parsed data record as an output row.
   * @throws ResultFileError `ROW_TOO_WIDE`, or for a row that breaks the rules.
   */
  accept(record: readonly string[]): string[] {
    const row = arrangeRow(record, this.shape.indexes);
    this.#count(record.length, row[0]!, 0, row[0]!.length);
    this.tally?.add(row);
    return row;
  }

  /**
   * Counts a data line of an identity-shaped source known by its field count, where its
   * identifier is in `text` (from `identifierStart` to `identifierEnd`), and the values
   * of its `tallied` columns, in order.
   * @throws ResultFileError `ROW_TOO_WIDE`, or for a row that breaks the rules.
   */
  acceptPlain(fieldCount: number, talliedValues: readonly string[], text: string, identifierStart: number, identifierEnd: number): void {
    this.#count(fieldCount, text, identifierStart, identifierEnd);
    this.tally?.addValues(talliedValues);
  }

  #count(fieldCount: number, text: string, identifierStart: number, identifierEnd: number): void {
    const row = this.summary.rows + 1;
    if (fieldCount > this.shape.width) {
      throw new ResultFileError(
        "ROW_TOO_WIDE",
        `In the result of ${this.label}, data row ${count(row)} has ${count(fieldCount)} fields; the first row has ${count(this.shape.width)}.`,
      );
    }
    this.rules.accept(row, text, identifierStart, identifierEnd);
    this.summary.rows = row;
  }
}

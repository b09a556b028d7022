import type { ServiceType } from "../spec/products.js";
import { ResultFileError } from "./errors.js";
import { arrangeRow, outputColumns, projection, sourceLayout } from "./header.js";
import type { SourceSummary } from "./result-table.js";
import { SpanTally, type SpanEntry } from "./span-tally.js";
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
 * Checks, counts, tallies and arranges the data rows of one source, in order. Both
 * the general path (parsed records) and the fast path (plain lines known by their
 * field count and tallied span) go through here, so they count and fail alike.
 */
export class SourceRows {
  /** Counts this source's rows into the tally (see SpanTally); undefined when nothing is tallied. */
  readonly spans: SpanTally | undefined;

  constructor(
    readonly label: string,
    readonly shape: RowShape,
    readonly summary: SourceSummary,
    tally?: RowTally,
  ) {
    this.spans = tally && new SpanTally(tally);
  }

  /**
   * A parsed data record as an output row.
   * @throws ResultFileError `ROW_TOO_WIDE`.
   */
  accept(record: readonly string[]): string[] {
    this.#count(record.length);
    const row = arrangeRow(record, this.shape.indexes);
    this.spans?.addRow(row);
    return row;
  }

  /**
   * Counts a plain data line of an identity-shaped source by its field count and the
   * span `text[start, end)` of its tallied columns (see SpanTally). `known` is the span's
   * entry from an earlier line, used while still current.
   * @returns the span's entry, for the next line with the same span.
   * @throws ResultFileError `ROW_TOO_WIDE`.
   */
  acceptSpan(fieldCount: number, text: string, start: number, end: number, known?: SpanEntry): SpanEntry | undefined {
    this.#count(fieldCount);
    if (known && this.spans?.repeat(known)) return known;
    return this.spans?.add(text, start, end);
  }

  /** Hands every row counted so far to the tally; call when the source is done, before any other source is read. */
  finish(): void {
    this.spans?.flush();
  }

  #count(fieldCount: number): void {
    if (fieldCount > this.shape.width) {
      throw new ResultFileError(
        "ROW_TOO_WIDE",
        `In the result of ${this.label}, data row ${this.summary.rows + 1} has ${fieldCount} fields; the first row has ${this.shape.width}.`,
      );
    }
    this.summary.rows += 1;
  }
}

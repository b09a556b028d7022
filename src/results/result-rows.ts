import { count } from "../format-count.js";
import { CARRIER_COLUMNS, SIGNAL_COLUMNS, resultColumns, type ServiceType } from "../spec/products.js";
import { ResultFileError } from "./errors.js";
import { quoted, type ResultRowRules } from "./result-rules.js";
import type { RowTally } from "./tally.js";

/*
 * A result file's records as output rows. The spec shows neither the column order nor
 * whether there is a header row, so both are inferred from the first row, and the
 * output always carries the spec's header with the spec's columns first; every data
 * row is then checked, counted, tallied and arranged into that order (SourceRows).
 */

/** A data row starts with a phone number: digits, perhaps with a `+` and separators. */
const PHONE_LIKE = /^\+?\d[\d ()-]*$/;

/** Every column name the spec gives, for recognising a header whose first name is empty. */
const KNOWN_NAMES: ReadonlySet<string> = new Set([...SIGNAL_COLUMNS, ...CARRIER_COLUMNS]);

/**
 * Whether the first row of a result file is a header. The first field of a data row
 * is the identifier (plain digits by the spec); anything else there (`identifier`,
 * `activated`, `Phone`) is a column name. An empty first field is a header only when
 * another field is a spec column name (an unnamed index column); otherwise it is a
 * data row, since a failed number may come back without its identifier.
 */
export function isHeaderRow(fields: readonly string[]): boolean {
  const first = (fields[0] ?? "").trim();
  if (first !== "") return !PHONE_LIKE.test(first);
  return fields.some((field) => KNOWN_NAMES.has(field.trim().toLowerCase()));
}

/** The columns of one result file, named, in the file's own order. */
export interface SourceLayout {
  hasHeader: boolean;
  /** Spec columns under their spec names; other columns under their trimmed header text or `extra_N`. */
  columns: readonly string[];
  /** Spec columns the file lacks; they are written empty. */
  missing: readonly string[];
  /** Columns the spec does not name, in file order. */
  extras: readonly string[];
}

/**
 * Names the columns of a result file from its first row. A header's names match the
 * spec case-insensitively; a headerless file is taken to be in the spec's order, and
 * fields past the spec's columns become `extra_1`, `extra_2`, ...
 * @throws ResultFileError `HEADER_NO_IDENTIFIER` when a header lacks `identifier`,
 *   the key that joins results back to the source.
 */
export function sourceLayout(firstRow: readonly string[], serviceType: ServiceType): SourceLayout {
  const spec = resultColumns(serviceType);
  const hasHeader = isHeaderRow(firstRow);
  const columns: string[] = [];
  const extras: string[] = [];
  const nameExtra = (text: string): string => {
    const base = text === "" ? `extra_${extras.length + 1}` : text;
    let name = base;
    for (let n = 2; columns.includes(name); n += 1) name = `${base}_${n}`;
    extras.push(name);
    return name;
  };
  firstRow.forEach((field, i) => {
    if (!hasHeader) {
      columns.push(spec[i] ?? nameExtra(""));
      return;
    }
    const text = field.trim();
    const known = spec.find((name) => name === text.toLowerCase());
    columns.push(known !== undefined && !columns.includes(known) ? known : nameExtra(text));
  });
  if (hasHeader && !columns.includes("identifier")) {
    throw new ResultFileError("HEADER_NO_IDENTIFIER", `The result file's header has no identifier column (found: ${namesOf(firstRow)}).`);
  }
  return { hasHeader, columns, extras, missing: spec.filter((name) => !columns.includes(name)) };
}

/** The output header for a file: the spec's columns in the spec's order, then the file's extras. */
export function outputColumns(layout: SourceLayout, serviceType: ServiceType): string[] {
  return [...resultColumns(serviceType), ...layout.extras];
}

/**
 * For each output column, the index of the same column in the source row, or -1
 * when the source lacks it.
 * @throws ResultFileError `COLUMNS_DIFFER` when the source has a column the output
 *   does not (a later task's result with extras the first did not have).
 */
export function projection(source: readonly string[], output: readonly string[]): number[] {
  const unknown = source.filter((name) => !output.includes(name));
  if (unknown.length > 0) {
    throw new ResultFileError(
      "COLUMNS_DIFFER",
      `A result file has column(s) ${namesOf(unknown)} that the first result did not; they cannot be merged into one output.`,
    );
  }
  return output.map((name) => source.indexOf(name));
}

/** Column names from the service, quoted in a message: each on one line and short, and not too many of them. */
function namesOf(names: readonly string[]): string {
  const shown = names.slice(0, 10).map((name) => quoted(name));
  return names.length > shown.length ? `${shown.join(", ")} and ${names.length - shown.length} more` : shown.join(", ");
}

/** Puts a source row's fields in output order; fields the source lacks (or a short row omits) are empty. */
export function arrangeRow(row: readonly string[], indexes: readonly number[]): string[] {
  return indexes.map((i) => (i < 0 ? "" : (row[i] ?? "")));
}

/** What this module finds of one source, kept in its summary (read-results.ts SourceSummary). */
export interface SourceFindings {
  hasHeader: boolean;
  /** Spec columns the file lacked (written empty). */
  missingColumns: readonly string[];
  /** Columns beyond the spec's (kept at the end). */
  extraColumns: readonly string[];
  /** Data rows read so far. */
  rows: number;
}

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
  summary: SourceFindings,
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
    readonly summary: SourceFindings,
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

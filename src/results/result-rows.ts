import { delimitedLine, isFormulaStart, plainLinesMayHoldFormula } from "../csv/write.js";
import { count } from "../format-count.js";
import { CARRIER_COLUMNS, SIGNAL_COLUMNS, resultColumns, type ServiceType } from "../spec/products.js";
import { ResultFileError } from "./errors.js";
import { identifierValue, quoted, type ResultRowRules, type UploadedIdentifiers } from "./result-rules.js";
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
 * A row of a `withheld` number (forgotten since its task was given it) is left out before
 * anything else: neither checked nor counted, as a number without a result; a source with
 * such numbers takes the general path only.
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
    private readonly withheld?: UploadedIdentifiers,
  ) {
    this.tallied = tally?.columns ?? [];
  }

  /**
   * A parsed data record as an output row, or undefined for a withheld number's.
   * @throws ResultFileError `ROW_TOO_WIDE`, or for a row that breaks the rules.
   */
  accept(record: readonly string[]): string[] | undefined {
    const row = arrangeRow(record, this.shape.indexes);
    if (this.withheld?.has(identifierValue(row[0]!, 0, row[0]!.length))) return undefined;
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

/**
 * `text` with CRLF line ends made LF, when it is whole lines (it ends with a line feed)
 * holding no quote and no other carriage return: what copyPlainLines reads. Undefined
 * for anything else.
 */
export function plainLines(text: string): string | undefined {
  if (!text.endsWith("\n") || text.includes('"')) return undefined;
  const lf = text.includes("\r") ? text.replaceAll("\r\n", "\n") : text;
  return lf.includes("\r") ? undefined : lf;
}

/**
 * The download's fast case: plain lines (see plainLines) of a source whose columns
 * already are the output's, in order. Without quotes a comma always ends a field, so
 * each line is checked, counted and tallied by finding its commas, and written out as
 * it is: a run of such lines is one slice of the text, exactly what parsing and
 * rendering each row would give. An empty line is dropped, a short one padded with
 * empty fields, and one with a field that would start a formula written again through
 * delimitedLine, as in the general path.
 *
 * It re-states a little of the CSV rules (a comma ends a field, a line feed a line), so
 * test/results/plain-lines.test.ts holds it to the general path. It stays because the
 * download needs it (issue 20 measured without it): `bulkcheck download ID -o FILE` of
 * the bench's 1,000,000-row results (`npm run bench -- download`'s data), CPU user+sys
 * of the command, two runs each alternating, same build with this path off, 2 vCPU at
 * load 8–13: carrier (34.6 MB) 2.00 and 1.41 s with it, 2.91 and 2.33 s without (+55%);
 * number_activity (17.2 MB) 1.36 and 1.07 s against 2.11 and 2.23 s, peak RSS 117–130
 * against 151 MB. Scaled to the carrier figure in the README (0.51 s, 68 MB/s) that is
 * ~0.79 s, ~44 MB/s: under the 50 MB/s target; the activity download would pass 150 MB.
 * @returns the output CSV, and how many lines `text` held.
 * @throws ResultFileError `ROW_TOO_WIDE`, or for a row that breaks the rules.
 */
export function copyPlainLines(text: string, rows: SourceRows): { csv: string; lines: number } {
  const tallied = rows.tallied;
  const formulas = plainLinesMayHoldFormula(text);
  const values = tallied.map(() => "");
  let csv = "";
  let copyFrom = 0;
  let lines = 0;
  let comma = -1;
  for (let start = 0; start < text.length; lines++) {
    const lf = text.indexOf("\n", start);
    if (lf === start) {
      csv += text.slice(copyFrom, start);
      copyFrom = start = lf + 1;
      continue;
    }
    let fields = 0;
    let next = 0;
    let identifierEnd = lf;
    let formula = false;
    for (let from = start; ; from = comma + 1) {
      if (comma < from) comma = nextComma(text, from);
      const end = Math.min(comma, lf);
      if (fields === 0) identifierEnd = end;
      if (formulas && from < end && isFormulaStart(text.charCodeAt(from))) formula = true;
      if (tallied[next] === fields) values[next++] = text.slice(from, end);
      fields++;
      if (end === lf) break;
    }
    while (next < values.length) values[next++] = "";
    rows.acceptPlain(fields, values, text, start, identifierEnd);
    const missing = rows.shape.width - fields;
    if (formula) {
      const row = text.slice(start, lf).split(",");
      while (row.length < rows.shape.width) row.push("");
      csv += text.slice(copyFrom, start) + delimitedLine(row, ",", false);
      copyFrom = lf + 1;
    } else if (missing > 0) {
      csv += text.slice(copyFrom, lf) + ",".repeat(missing);
      copyFrom = lf;
    }
    start = lf + 1;
  }
  return { csv: csv + text.slice(copyFrom), lines };
}

function nextComma(text: string, from: number): number {
  const at = text.indexOf(",", from);
  return at < 0 ? text.length : at;
}

import { shortened, terminalText } from "../ansi.js";
import { count } from "../format-count.js";
import type { ServiceType } from "../spec/products.js";
import { RowCountMismatchError } from "./errors.js";
import type { SummaryTable } from "./format-xlsx.js";
import type { SourceSummary } from "./read-results.js";
import type { OutputFormat } from "./render.js";
import type { Tally, ValueCount } from "./tally.js";

/** A source, or the whole output, whose row count differs from what was expected. */
export interface RowCountMismatch {
  /** A source's label, or "total" for the output as a whole. */
  label: string;
  expected: number;
  actual: number;
}

/** Everything `writeResults` learned, for the CLI to print (stderr) or emit as JSON. */
export interface ResultSummary extends Tally {
  serviceType: ServiceType;
  format: OutputFormat;
  /** Data rows in the output; for `table`, the rows shown (the others were counted, not shown). */
  rowsWritten: number;
  bytes: number;
  /** Absolute path of the file written; absent for a stream destination. */
  path?: string;
  sources: SourceSummary[];
  expectedRows?: number;
  /** Empty when every expected count matched (or none was given). */
  mismatches: RowCountMismatch[];
  /** Temp files of dead earlier runs removed next to the destination. */
  staleTempFilesRemoved: string[];
}

/** Compares each source against its expected rows, and the total against `expectedTotal`. */
export function rowCountMismatches(sources: readonly SourceSummary[], rows: number, expectedTotal?: number): RowCountMismatch[] {
  const mismatches = sources
    .filter((source) => source.expectedRows !== undefined && source.expectedRows !== source.rows)
    .map((source) => ({ label: source.label, expected: source.expectedRows ?? 0, actual: source.rows }));
  if (expectedTotal !== undefined && expectedTotal !== rows) {
    mismatches.push({ label: "total", expected: expectedTotal, actual: rows });
  }
  return mismatches;
}

export function describeMismatch(mismatch: RowCountMismatch): string {
  const what = mismatch.label === "total" ? "The output has" : `The result of ${mismatch.label} has`;
  return `${what} ${count(mismatch.actual)} rows; ${count(mismatch.expected)} were expected.`;
}

/** For `--strict`: throws when any row count differs from what was expected. */
export function assertRowCounts(summary: ResultSummary): void {
  if (summary.mismatches.length > 0) {
    throw new RowCountMismatchError(summary.mismatches.map(describeMismatch).join(" "));
  }
}

/** Characters of a value a summary line shows: the file has it whole. */
const SUMMARY_VALUE_CHARS = 40;

function listValues(values: readonly ValueCount[]): string {
  // Carrier names from the service, quoted in a line for a person: on one line, short, escapes shown as text.
  return values
    .map(({ value, count: n }) => {
      const shown = value === "" ? EMPTY_VALUE : terminalText(shortened(value, SUMMARY_VALUE_CHARS), { singleLine: true });
      return `${shown} ${count(n)}`;
    })
    .join(", ");
}

/** The summary as lines for a person (the CLI prints them on stderr); mismatches come last, as warnings. */
export function describeSummary(summary: ResultSummary): string[] {
  const where = summary.path === undefined ? "" : ` to ${summary.path}`;
  const lines =
    summary.format === "table"
      ? [`Showed ${count(summary.rowsWritten)} of ${count(summary.rows)} rows.`]
      : [`Wrote ${count(summary.rows)} rows${where} (${summary.format}).`];
  if (summary.signal) {
    const { true: yes, false: no, other } = summary.signal;
    lines.push(`activated: ${count(yes)} true, ${count(no)} false${other > 0 ? `, ${count(other)} other` : ""}`);
  }
  if (summary.carrier && summary.rows > 0) {
    lines.push(`Top carriers: ${listValues(summary.carrier.topCarriers)}`);
    lines.push(`Top number types: ${listValues(summary.carrier.topNumberTypes)}`);
  }
  return [...lines, ...summary.mismatches.map((m) => `Warning: ${describeMismatch(m)}`)];
}

/** How an empty value (the service sent none) is shown in a summary. */
export const EMPTY_VALUE = "(empty)";

function valueRows(values: readonly ValueCount[]): Array<[string, number]> {
  return values.map(({ value, count }) => [value === "" ? EMPTY_VALUE : value, count]);
}

/**
 * The rows' counts as the small tables of an xlsx Summary sheet: rows written, then
 * the `activated` split for a signal product, or top carriers, number types, regions
 * and the carrier/underlying-carrier differences for the carrier product.
 */
export function tallyTables(tally: Tally): SummaryTable[] {
  const tables: SummaryTable[] = [{ heading: ["Rows", "Count"], rows: [["Rows written", tally.rows]] }];
  if (tally.signal) {
    const { true: yes, false: no, other } = tally.signal;
    tables.push({
      heading: ["activated", "Rows"],
      rows: [["true", yes], ["false", no], ...(other > 0 ? [["other", other] as const] : [])],
    });
  }
  if (tally.carrier) {
    const { topCarriers, topNumberTypes, topRegions, differences } = tally.carrier;
    tables.push(
      { heading: ["Top carriers", "Rows"], rows: valueRows(topCarriers) },
      { heading: ["Number types", "Rows"], rows: valueRows(topNumberTypes) },
      { heading: ["Top regions", "Rows"], rows: valueRows(topRegions) },
      {
        heading: ["Carrier", "Underlying carrier", "Rows"],
        rows: [
          ...differences.top.map(({ carrier, underlyingCarrier, count }) => [carrier, underlyingCarrier, count]),
          ["All rows whose carriers differ", "", differences.rows],
        ],
      },
    );
  }
  return tables;
}

import type { TextEncoding } from "../csv/encodings.js";
import type { DigitsReading, RowClass } from "./classify.js";

/** What the summary counts of a row. */
export interface RowTally {
  class: RowClass;
  national?: boolean | undefined;
  sharedRegion?: string | undefined;
  extension?: string | undefined;
  vote?: DigitsReading | undefined;
  ambiguous?: boolean | undefined;
  spreadsheetExpanded?: boolean | undefined;
}

/**
 * Bare digit strings valid in two readings as different numbers (rows, duplicates
 * included), how they were read, and the evidence: the list's bare cells valid in
 * exactly one reading, one vote each.
 */
export interface AmbiguousSummary {
  total: number;
  international: number;
  national: number;
  /** `flag` when --digits-as decided, else `convention`: the majority of the votes, or a tie's calling-code reading. */
  resolved_by: "convention" | "flag";
  votes: { international: number; national: number };
}

/**
 * Counts of a prepared list. The `_cnt` names and `submitted_lines`/`kept` mirror
 * the service's task fields. Invariant: kept + invalid_cnt + no_code_cnt +
 * other_country_cnt + duplicate_cnt + blank (+ below_min_task) = rows_read.
 */
export interface PrepareSummary {
  /** Data rows read (a header row is not one). */
  rows_read: number;
  /** Non-blank rows: the lines the service would have counted. */
  submitted_lines: number;
  kept: number;
  invalid_cnt: number;
  no_code_cnt: number;
  other_country_cnt: number;
  duplicate_cnt: number;
  blank: number;
  /** Under `--country auto` only: rows of countries with too few numbers for a task of their own. */
  below_min_task?: number;
  /** Kept rows written in national format that got the task country's code. */
  national_normalised: number;
  /** Kept rows per region sharing the task's calling code (GG, JE, IM under +44). */
  shared_code_regions: Record<string, number>;
  /** Kept rows whose cell carried an extension, dropped from the upload. */
  extensions_dropped: number;
  /** Rows written in spreadsheet scientific notation that held every digit, expanded and read as bare digits. */
  spreadsheet_expanded: number;
  ambiguous: AmbiguousSummary;
  /** The encoding the list was read in, and whether it was detected (BOM, valid UTF-8, else Windows-1252) or --encoding. */
  encoding: TextEncoding;
  encoding_source: "detected" | "forced";
}

/** The counts every summary has had since the journal began recording them. */
export const ROW_COUNTS = [
  "rows_read",
  "submitted_lines",
  "kept",
  "invalid_cnt",
  "no_code_cnt",
  "other_country_cnt",
  "duplicate_cnt",
  "blank",
] as const satisfies ReadonlyArray<keyof PrepareSummary>;

/** The fields of a summary that are plain counts, which summaries of several lists add up. */
const COUNTS = [...ROW_COUNTS, "national_normalised", "extensions_dropped", "spreadsheet_expanded"] as const satisfies ReadonlyArray<
  keyof PrepareSummary
>;

/**
 * Several lists' summaries as one: counts, regions and ambiguous rows added up; the
 * encoding and how ambiguous rows were resolved are the first list's.
 */
export function addSummaries(summaries: readonly PrepareSummary[]): PrepareSummary {
  const total = emptySummary();
  const [first] = summaries;
  if (first) Object.assign(total, { encoding: first.encoding, encoding_source: first.encoding_source });
  total.ambiguous.resolved_by = first?.ambiguous.resolved_by ?? "convention";
  for (const summary of summaries) {
    for (const field of COUNTS) total[field] += summary[field];
    if (summary.below_min_task !== undefined) total.below_min_task = (total.below_min_task ?? 0) + summary.below_min_task;
    for (const [region, n] of Object.entries(summary.shared_code_regions)) {
      total.shared_code_regions[region] = (total.shared_code_regions[region] ?? 0) + n;
    }
    const { ambiguous } = summary;
    total.ambiguous.total += ambiguous.total;
    total.ambiguous.international += ambiguous.international;
    total.ambiguous.national += ambiguous.national;
    total.ambiguous.votes.international += ambiguous.votes.international;
    total.ambiguous.votes.national += ambiguous.votes.national;
  }
  return total;
}

export function emptySummary(): PrepareSummary {
  return {
    rows_read: 0,
    submitted_lines: 0,
    kept: 0,
    invalid_cnt: 0,
    no_code_cnt: 0,
    other_country_cnt: 0,
    duplicate_cnt: 0,
    blank: 0,
    national_normalised: 0,
    shared_code_regions: {},
    extensions_dropped: 0,
    spreadsheet_expanded: 0,
    ambiguous: { total: 0, international: 0, national: 0, resolved_by: "convention", votes: { international: 0, national: 0 } },
    encoding: "utf8",
    encoding_source: "detected",
  };
}

/** Adds one row's outcome to the summary. */
export function countRow(summary: PrepareSummary, row: Readonly<RowTally>): void {
  summary.rows_read++;
  if (row.spreadsheetExpanded) summary.spreadsheet_expanded++;
  if (row.vote !== undefined) summary.ambiguous.votes[row.vote]++;
  if (row.ambiguous) summary.ambiguous.total++;
  switch (row.class) {
    case "blank":
      summary.blank++;
      return;
    case "invalid":
      summary.invalid_cnt++;
      break;
    case "no_code":
      summary.no_code_cnt++;
      break;
    case "other_country":
      summary.other_country_cnt++;
      break;
    case "duplicate":
      summary.duplicate_cnt++;
      break;
    case "below_min_task":
      summary.below_min_task = (summary.below_min_task ?? 0) + 1;
      break;
    case "kept":
      summary.kept++;
      if (row.national) summary.national_normalised++;
      if (row.extension !== undefined) summary.extensions_dropped++;
      if (row.sharedRegion !== undefined) {
        summary.shared_code_regions[row.sharedRegion] = (summary.shared_code_regions[row.sharedRegion] ?? 0) + 1;
      }
      break;
  }
  summary.submitted_lines++;
}

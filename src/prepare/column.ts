import { UsageError } from "../errors.js";
import { headerScore } from "./header-names.js";
import type { SourceRecord } from "../csv/record-reader.js";

/** `record`: the column an earlier preparation of the same list chose, as its journal kept it (a retry reads that list again). */
export type ColumnChosenBy = "option" | "record" | "header" | "content" | "only-column" | "first-column";

/** The column an earlier preparation chose (0-based), to read the same list the same way again. */
export interface RecordedColumn {
  recordedIndex: number;
}

export interface ColumnChoice {
  /** 0-based index into a record's fields (the `column` option and messages count from 1). */
  index: number;
  /** The header's name for the column, when the file has a header. */
  name?: string;
  chosenBy: ColumnChosenBy;
}

export interface ColumnInput {
  /** The `column` option: a header name (case-insensitive) or a 1-based number; or the column recorded by an earlier preparation. */
  option: string | RecordedColumn | undefined;
  header: readonly string[] | undefined;
  columnCount: number;
  sample: readonly SourceRecord[];
  /** Whether a cell holds a phone number the classifier accepts as valid (any country). */
  isNumber: (cell: string) => boolean;
  sourceName: string;
}

/**
 * Picks the phone column. A recorded column is taken as it is. `option` wins: all digits is a 1-based index, anything
 * else a header name (case-insensitive, trimmed); a column that does not exist is
 * a UsageError listing the columns there are. Without it: the only column; else,
 * with a header, the best phone-like header name (ties broken by content, then
 * leftmost), failing that the column where most sampled cells are valid numbers;
 * without a header, the first column.
 */
export function chooseColumn(input: ColumnInput): ColumnChoice {
  const { option, header, columnCount } = input;
  const named = (index: number): ColumnChoice["name"] => header?.[index];
  if (typeof option === "object") return withName({ index: option.recordedIndex, chosenBy: "record" }, named(option.recordedIndex));
  if (option !== undefined) {
    const index = optionIndex(input, option.trim());
    return withName({ index, chosenBy: "option" }, named(index));
  }
  if (columnCount <= 1) return withName({ index: 0, chosenBy: "only-column" }, named(0));
  if (!header) return { index: 0, chosenBy: "first-column" };

  const scores = header.map(headerScore);
  const best = Math.max(...scores);
  if (best > 0) {
    const candidates = scores.flatMap((score, index) => (score === best ? [index] : []));
    const index = candidates.length === 1 ? candidates[0]! : (byContent(input, candidates) ?? candidates[0]!);
    return withName({ index, chosenBy: "header" }, named(index));
  }
  const index = byContent(
    input,
    Array.from({ length: columnCount }, (_, i) => i),
  );
  if (index === undefined) {
    throw new UsageError(`No column of ${input.sourceName} looks like phone numbers (columns: ${listColumns(input)}).`, {
      hint: "Name the phone column with --column NAME or --column NUMBER.",
    });
  }
  return withName({ index, chosenBy: "content" }, named(index));
}

function optionIndex(input: ColumnInput, option: string): number {
  if (/^\d+$/.test(option)) {
    const number = Number(option);
    if (number >= 1 && number <= input.columnCount) return number - 1;
    throw new UsageError(`${input.sourceName} has no column ${option} (columns: ${listColumns(input)}).`, {
      hint: "Pass --column with a header name or a number from 1.",
    });
  }
  const wanted = option.toLowerCase();
  const index = input.header?.findIndex((name) => name.trim().toLowerCase() === wanted) ?? -1;
  if (index >= 0) return index;
  const why = input.header ? `has no column named "${option}"` : `has no header row, so no column is named "${option}"`;
  throw new UsageError(`${input.sourceName} ${why} (columns: ${listColumns(input)}).`, {
    hint: "Pass --column with one of the names listed, or a column number from 1.",
  });
}

/** The candidate column holding the most valid numbers in the sample; undefined when none holds any. */
function byContent(input: ColumnInput, candidates: readonly number[]): number | undefined {
  let best: number | undefined;
  let bestCount = 0;
  for (const index of candidates) {
    let count = 0;
    for (const record of input.sample) {
      const cell = record.fields[index];
      if (cell !== undefined && input.isNumber(cell)) count++;
    }
    if (count > bestCount) [best, bestCount] = [index, count];
  }
  return best;
}

/** `1 "name", 2 "phone"` with a header, `1–3` without. */
function listColumns(input: ColumnInput): string {
  if (!input.header) return input.columnCount <= 1 ? "1" : `1–${input.columnCount}`;
  return input.header.map((name, i) => `${i + 1} "${name}"`).join(", ");
}

function withName(choice: ColumnChoice, name: string | undefined): ColumnChoice {
  return name === undefined ? choice : { ...choice, name };
}

/** The column whose cells tell which record of the source a row of the rejects file is. */
export interface IdColumn {
  /** 0-based. */
  index: number;
  /** As the rejects file's header names it: the source's header name, or `column N`. */
  label: string;
}

/** Words of a header name that mark an identifier (`id`, `Customer ID`, `contactId`, `crm_ref`, `uuid`). */
const ID_WORDS = new Set(["id", "uid", "uuid", "guid", "ref", "reference", "key"]);

/**
 * The column that identifies a record for a person reading the rejects: the leftmost
 * column whose header name marks an identifier, else the first column that is not the
 * phone column; undefined for a list of one column.
 */
export function chooseIdColumn(header: readonly string[] | undefined, columnCount: number, phoneIndex: number): IdColumn | undefined {
  const candidates = Array.from({ length: columnCount }, (_, i) => i).filter((index) => index !== phoneIndex);
  const named = candidates.find((index) => isIdName(header?.[index] ?? ""));
  const index = named ?? candidates[0];
  if (index === undefined) return undefined;
  const name = header?.[index]?.trim();
  return { index, label: name ? name : `column ${index + 1}` };
}

function isIdName(name: string): boolean {
  const words = name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((word) => ID_WORDS.has(word));
}

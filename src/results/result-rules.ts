import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { identifierKey } from "../spec/identifier-key.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import { CARRIER_COLUMNS, canonicalServiceType, resultColumns } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { ResultFileError } from "./errors.js";

/**
 * What a task's result file may contain. The service is not trusted to keep to the
 * spec, and one that did not would cost money and mislead (a result of 200 rows for 20
 * numbers uploaded, charged as 200): a result that breaks a rule is refused whole and
 * nothing is written from it. Every reader of results (download, staging, joins,
 * retry-failed, the report) goes through resultParts, which applies these rules:
 *
 * - the task's own counts: success_cnt and failure_cnt are counts of the task's
 *   numbers, so neither alone nor together above `total`;
 * - every row's identifier is one, as the spec defines it: the number's digits with its
 *   country code, no plus, no spaces: 1 to 15 digits (E.164), the first not 0;
 * - at most one row per identifier in a task's result;
 * - at most `total` rows in a task's result;
 * - where the numbers uploaded to the task are known (submit --wait fetching results
 *   while its upload files exist, joins, which prepare the source again, and
 *   retry-failed, which rebuilds the task's list), every identifier is one of them.
 *
 * - at most the bytes `total` rows can take at the widest row bulkcheck accepts (see
 *   resultBytesBound), checked as the bytes arrive, before any row is read or any byte
 *   staged: a body that never ends (or pads its rows with blank lines) stops there.
 *
 * Fewer rows than success_cnt is a disagreement, not a breach: it is reported as a
 * mismatch (see rowCountMismatches), and --strict turns it into an error.
 */

/** The counts of a task the rules need, as the service reported them. */
export type TaskCounts = Pick<Task, "id" | "total" | "success_cnt" | "failure_cnt">;

/** The identifiers a task was given, as keys (see identifierKey). */
export interface UploadedIdentifiers {
  has(key: number): boolean;
}

/** E.164 numbers have at most 15 digits. */
const MAX_IDENTIFIER_DIGITS = 15;

/**
 * The widest value a result's column may hold, in bytes as sent (quotes included). The spec
 * bounds none; what services send is a word (`true`, `mobile`) or a name (carriers, regions,
 * cities) of tens of bytes, so this is some 20 times the longest seen.
 */
export const MAX_RESULT_VALUE_BYTES = 1024;
/** Columns a service may add to a product's (bulkcheck keeps them), each bounded like the product's own. */
const ADDED_COLUMNS = 8;
/** A result's file around its rows: a byte-order mark, a zip's headers and directory, blank lines. */
const RESULT_FILE_OVERHEAD_BYTES = 64 * 1024;

/**
 * The most bytes a result of `total` numbers of `product` may take, zipped or not: its
 * header and `total` rows, each row at the widest bulkcheck accepts (the identifier, then the
 * product's columns and up to ADDED_COLUMNS more, each at most MAX_RESULT_VALUE_BYTES, twice
 * that for a file in UTF-16), plus RESULT_FILE_OVERHEAD_BYTES: for a task of 3 numbers,
 * 136 KiB (a signal product) or 176 KiB (carrier); about 18 or 28 KiB a number more. Never
 * more than `cap`, the bound on any result (4 GiB: reached from some 150,000 carrier or
 * 230,000 signal numbers).
 */
export function resultBytesBound(total: number, product: string, cap: number): number {
  const known = canonicalServiceType(product);
  // A product bulkcheck does not know is taken at the widest it knows.
  const columns = (known ? resultColumns(known) : CARRIER_COLUMNS).length - 1 + ADDED_COLUMNS;
  const rowBytes = 2 * (MAX_IDENTIFIER_DIGITS + columns * (1 + MAX_RESULT_VALUE_BYTES) + 2);
  return Math.min(cap, RESULT_FILE_OVERHEAD_BYTES + (Math.max(0, total) + 1) * rowBytes);
}

/**
 * Refuses a task whose counts cannot be right: more numbers with (or without) a result
 * than it has, which would charge more than was reserved. Checked before its result
 * is read.
 * @throws ResultFileError `COUNTS_OVER_TOTAL`.
 */
export function checkTaskCounts(task: TaskCounts): void {
  const success = task.success_cnt ?? 0;
  const failure = task.failure_cnt ?? 0;
  if (success + failure <= task.total) return;
  throw new ResultFileError(
    "COUNTS_OVER_TOTAL",
    `Task ${task.id} reports ${describeCounts(task)} for a total of ${task.total} numbers: more numbers than the task has. Its result was not read.`,
  );
}

function describeCounts(task: TaskCounts): string {
  const counts = [`success_cnt ${task.success_cnt ?? 0}`];
  if (task.failure_cnt !== undefined) counts.push(`failure_cnt ${task.failure_cnt}`);
  return counts.join(" and ");
}

/**
 * The identifier in `text` from `start` to `end` as its number, or -1 when it is not an
 * identifier: 1 to 15 ASCII digits, the first not 0 (a country code never starts with 0).
 * Reads the characters in place: the download's fast case calls this for every line.
 */
export function identifierValue(text: string, start: number, end: number): number {
  if (end - start < 1 || end - start > MAX_IDENTIFIER_DIGITS || text.charCodeAt(start) === 0x30) return -1;
  let value = 0;
  for (let i = start; i < end; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** A value from the service quoted in a message: on one line, and short. */
export function quoted(value: string, max = 40): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}

/**
 * The row rules of one task's result (see the top of this file), applied to each data
 * row in order: `accept` is given the row's number and where its identifier is, and
 * `finish` is called after the last row.
 *
 * Repeats are found at the end, by sorting the identifiers: a typed array of them
 * (8 bytes a row) sorted natively took a third of the time of looking each up in an
 * IdentifierSet as it came (1,000,000 rows: ~250 against ~700 ms on the busy machine
 * measured), which the download's fast case could not afford. Nothing is written
 * before a result is read to its end, so finding them there refuses it all the same.
 */
export class ResultRowRules {
  #identifiers = new Float64Array(1024);
  #rows = 0;

  constructor(
    private readonly label: string,
    private readonly task: TaskCounts | undefined,
    private readonly uploaded: UploadedIdentifiers | undefined,
  ) {}

  /**
   * Checks data row `row` (from 1), whose identifier is `text` from `start` to `end`.
   * @throws ResultFileError `ROWS_OVER_TOTAL`, `IDENTIFIER_INVALID` or `IDENTIFIER_NOT_UPLOADED`.
   */
  accept(row: number, text: string, start: number, end: number): void {
    if (this.task && row > this.task.total) {
      throw new ResultFileError(
        "ROWS_OVER_TOTAL",
        `The result of ${this.label} has more than ${this.task.total} rows, although the task has ${this.task.total} numbers.`,
      );
    }
    const key = identifierValue(text, start, end);
    if (key < 0) {
      throw new ResultFileError(
        "IDENTIFIER_INVALID",
        `In the result of ${this.label}, data row ${row} has the identifier ${quoted(text.slice(start, end))}; an identifier is the number's digits with its country code (1 to 15 digits, no plus, no spaces).`,
      );
    }
    if (this.uploaded && !this.uploaded.has(key)) {
      throw new ResultFileError(
        "IDENTIFIER_NOT_UPLOADED",
        `In the result of ${this.label}, data row ${row} has the identifier ${text.slice(start, end)}, which was not uploaded to that task.`,
      );
    }
    if (this.#rows === this.#identifiers.length) {
      const grown = new Float64Array(this.#rows * 2);
      grown.set(this.#identifiers);
      this.#identifiers = grown;
    }
    this.#identifiers[this.#rows++] = key;
  }

  /**
   * Checks what needs every row: that no identifier came twice.
   * @throws ResultFileError `IDENTIFIER_REPEATED`.
   */
  finish(): void {
    const sorted = this.#identifiers.subarray(0, this.#rows).sort();
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i] !== sorted[i - 1]) continue;
      const times = countFrom(sorted, i - 1);
      throw new ResultFileError(
        "IDENTIFIER_REPEATED",
        `In the result of ${this.label}, the identifier ${sorted[i]} has ${times} rows; a task has one row per number.`,
      );
    }
  }
}

/** How many times the value at `from` of a sorted array occurs. */
function countFrom(sorted: Float64Array, from: number): number {
  let end = from;
  while (end < sorted.length && sorted[end] === sorted[from]) end++;
  return end - from;
}

/** The identifiers of an upload file (one a line, as preparation writes them). */
export async function uploadedIdentifiers(path: string): Promise<IdentifierSet> {
  const identifiers = new IdentifierSet();
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    line += 1;
    if (text !== "") identifiers.firstLineOf(identifierKey(text), line);
  }
  return identifiers;
}

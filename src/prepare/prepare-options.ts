import { resolve } from "node:path";
import { NULL_DEVICE } from "../results/atomic-file.js";
import type { CountryCode } from "libphonenumber-js/max";
import { UsageError } from "../errors.js";
import type { TextEncoding } from "../csv/encodings.js";
import { isKnownCountry, type ClassifyOptions, type DigitsReading } from "./classify.js";
import type { RecordedColumn } from "./column.js";
import type { ListSource } from "./input-source.js";

export interface PrepareOptions {
  /** A path, or a stream (stdin) with an optional name for messages and format detection. */
  source: ListSource;
  /** Task country; absent only for the carrier product without --country (numbers must then carry their code). */
  country?: CountryCode;
  /**
   * Phone column: a header name (case-insensitive) or a 1-based column number (`--column`),
   * or the column a journalled preparation of the same list read (retry-failed rebuilding it).
   */
  column?: string | RecordedColumn;
  /** Class national-format numbers as `no_code` (the service's rule) instead of adding the country's code. */
  requireCountryCode?: boolean;
  /** Class regions sharing the task's calling code (GG/JE/IM under +44) as `other_country`. */
  strictRegion?: boolean;
  /** `--country auto`: keep valid numbers of every country; `country` (--default-country) only reads national ones. */
  anyRegion?: boolean;
  /**
   * How to read bare digit strings valid both with their calling code and as a
   * national number (two different numbers); default: as most of the list's
   * unambiguous bare cells are written, and with the calling code on a tie.
   */
  digitsAs?: DigitsReading;
  /** Read the list in this encoding; default: its byte-order mark's, UTF-8 when valid, else Windows-1252. Not for a workbook. */
  encoding?: TextEncoding;
  /** The sheet of an Excel workbook to read: its name, or its number from 1; default: the first visible worksheet. */
  sheet?: string;
  /** Directory for the upload file(s), created if missing; a new temp directory when neither this nor uploadPath is given. */
  outputDir?: string;
  /**
   * One explicit upload file (validate -o), written when preparation is complete, whole or
   * not at all. When split, the parts are named after it. Not together with outputDir.
   */
  uploadPath?: string;
  /** Split the kept list into balanced files of at most this many numbers; default: one file. */
  maxTaskSize?: number;
  /**
   * With anyRegion (`submit --country auto`): one upload list per country, split above
   * maxTaskSize; a country with fewer numbers than minTaskSize is left out, its rows
   * `below_min_task`. Replaces maxTaskSize.
   */
  countryTasks?: { minTaskSize: number; maxTaskSize: number };
  /**
   * Write every row not in the upload to this CSV (`line,value,class,reason,record` and the source's id column; see
   * RejectsWriter), when preparation is complete, whole or not at all.
   */
  rejectsPath?: string;
  /** Or to this stream (stdout), once preparation is complete; it is not ended. */
  rejectsStream?: NodeJS.WritableStream;
  /** --safe-csv: the rejected values that look like a formula get a `'` in front (see neutraliseFormula); default as read. */
  safeCsv?: boolean;
  /**
   * Replace an uploadPath or rejectsPath that exists (a regular file, or a symbolic link:
   * the link itself). Whatever this says, neither may be the list itself, by any name;
   * both are refused before the list is read (see checkDestination).
   */
  force?: boolean;
  /**
   * Worker threads for classification; 0 (the default) = in this thread. The
   * digit fast path made classifying cheaper than reading and deduplicating, so
   * threads gained 0–22% (most on lists that need libphonenumber-js's full
   * parse) for 30–65 MB each (every worker loads its own metadata).
   */
  workers?: number;
  /** Called after each batch with the number of data rows read so far. */
  onProgress?: (rowsRead: number) => void;
  /**
   * Stops preparation when aborted (a command's --timeout, Ctrl-C, SIGTERM): reading
   * stops promptly, whatever the list is (a file, a stdin that is still open, a
   * workbook), nothing is written where the caller asked, and prepareList rejects with
   * the signal's reason.
   */
  signal?: AbortSignal;
}

/** Checks the options a user can get wrong and returns the classifier's. */
export function classifyOptionsOf(options: PrepareOptions): ClassifyOptions {
  const country: unknown = options.country;
  if (country !== undefined && (typeof country !== "string" || !isKnownCountry(country))) {
    throw new UsageError(`Unknown country ${JSON.stringify(country)}.`, { hint: "Use an ISO 3166-1 alpha-2 code such as GB or US." });
  }
  if (options.maxTaskSize !== undefined && !(Number.isInteger(options.maxTaskSize) && options.maxTaskSize >= 1)) {
    throw new UsageError(`The maximum task size must be a whole number of at least 1 (got ${options.maxTaskSize}).`);
  }
  if (options.workers !== undefined && !(Number.isInteger(options.workers) && options.workers >= 0)) {
    throw new UsageError(`The number of workers must be a whole number of at least 0 (got ${options.workers}).`);
  }
  if (options.uploadPath !== undefined && options.outputDir !== undefined) {
    throw new UsageError("Give either an upload file or an output directory, not both.");
  }
  if (options.rejectsPath !== undefined && options.rejectsStream !== undefined) {
    throw new UsageError("Give either a rejects file or a rejects stream, not both.");
  }
  if (
    options.uploadPath !== undefined &&
    options.rejectsPath !== undefined &&
    resolve(options.uploadPath) === resolve(options.rejectsPath) &&
    resolve(options.uploadPath) !== NULL_DEVICE
  ) {
    throw new UsageError("The upload file and the rejects file are the same file; give each its own path.");
  }
  if (options.countryTasks !== undefined && !options.anyRegion) {
    throw new UsageError("Tasks by country are for lists of every country (--country auto).");
  }
  if (options.digitsAs !== undefined && options.digitsAs !== "international" && options.digitsAs !== "national") {
    throw new UsageError(`Digits are read as "international" or "national" (got ${JSON.stringify(options.digitsAs)}).`);
  }
  return {
    ...(options.country === undefined ? {} : { country: options.country }),
    requireCountryCode: options.requireCountryCode ?? false,
    strictRegion: options.strictRegion ?? false,
    ...(options.anyRegion ? { anyRegion: true } : {}),
  };
}

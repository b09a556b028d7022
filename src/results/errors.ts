import type { Stats } from "node:fs";
import { BulkcheckError, UsageError, type ErrorDetails } from "../errors.js";

/**
 * Why a result file could not be turned into output. Stable codes, so the CLI and
 * tests can tell the cases apart without matching message text.
 */
export type ResultFileErrorCode =
  | "ZIP_INVALID" // yauzl could not read the archive
  | "ZIP_UNSAFE_NAME" // an entry name is absolute or climbs out with `..`
  | "ZIP_NO_CSV"
  | "ZIP_MANY_CSV"
  | "ZIP_ENCRYPTED" // or compressed with a method yauzl cannot decode
  | "ZIP_TOO_LARGE" // over the uncompressed-size cap, or the compression ratio looks like a zip bomb
  | "CSV_INVALID"
  | "HEADER_NO_IDENTIFIER"
  | "ROW_TOO_WIDE"
  | "COLUMNS_DIFFER" // a later task's result has a column the first one did not
  | "CELL_TOO_LONG" // a value longer than an Excel cell holds, for xlsx output
  | "RESULT_TOO_LARGE" // a CSV result larger than the cap on what a result may hold
  // The rules of result-rules.ts:
  | "COUNTS_OVER_TOTAL" // the task's success_cnt and failure_cnt add up to more than its total
  | "ROWS_OVER_TOTAL"
  | "IDENTIFIER_INVALID" // not 1 to 15 digits with the country code
  | "IDENTIFIER_REPEATED" // a second row for one identifier in a task's result
  | "IDENTIFIER_NOT_UPLOADED"; // a number that was not uploaded to the task

/**
 * The service's result file is unusable as sent, or breaks the rules of what a result
 * may contain (result-rules.ts): it is refused whole and nothing is written from it.
 * Kind `input` (exit 3), the service's input refused: nothing the user typed is wrong
 * and it is no bug of bulkcheck's, and downloading again rarely helps, so the hint says
 * what to report.
 */
export class ResultFileError extends BulkcheckError {
  readonly code: ResultFileErrorCode;

  constructor(code: ResultFileErrorCode, message: string, details: ErrorDetails = {}) {
    super("input", message, {
      hint: "Nothing was written. Note the task id and report the result file to the service.",
      ...details,
    });
    this.code = code;
  }
}

/** The destination file exists and `force` was not given. */
export class DestinationExistsError extends UsageError {
  constructor(readonly path: string) {
    super(`${path} already exists.`, { hint: "Choose another path, or pass --force to replace it." });
  }
}

/**
 * The destination is a file the command reads or bulkcheck keeps (the list, a join's source,
 * bulkcheck's store, staging, config file and directories; `file` says which, and why it is
 * never written): writing it would destroy it. `otherName` is that file's own path when the
 * destination reaches it by another name (a hard or symbolic link, a file inside a directory).
 */
export class DestinationIsSourceError extends UsageError {
  constructor(
    readonly path: string,
    readonly otherName?: string,
    file: { role: string; why?: string | undefined; tree?: boolean | undefined; path?: string } = { role: "the list being read" },
  ) {
    const why = file.why ?? "bulkcheck never writes over its input";
    super(`${path} is ${file.role}${otherName === undefined ? "" : ` (${otherName})`}; ${why}.`, {
      hint: file.tree && file.path !== undefined ? `Give the output a path outside ${file.path}.` : "Give the output a path of its own.",
    });
  }
}

/** What --force may replace: a regular file, or a symbolic link (the link itself, not what it points to). */
export function isReplaceable(stats: Stats): boolean {
  return stats.isFile() || stats.isSymbolicLink();
}

/** "a directory", "a named pipe (FIFO)", …: what stands at a path that --force may not replace (see isReplaceable). */
function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a named pipe (FIFO)";
  if (stats.isSocket()) return "a socket";
  return stats.isCharacterDevice() || stats.isBlockDevice() ? "a device" : "not a regular file";
}

/** The destination is a directory, device, FIFO or socket: --force replaces only files (a device would become one). */
export class DestinationNotReplaceableError extends UsageError {
  constructor(
    readonly path: string,
    stats: Stats,
    flag = "-o",
    takesStdout = true,
  ) {
    super(`${path} is ${fileKind(stats)}: --force replaces only a regular file (or a symbolic link).`, {
      hint: takesStdout
        ? `Give ${flag} the path of a file; to write into a pipe or device, use ${flag} - and redirect stdout.`
        : `Give ${flag} the path of a file.`,
    });
  }
}

/**
 * Rows in the result differ from what the task reported (`success_cnt`). Raised only on
 * request (`--strict`), after the output was written: an outcome of its own (exit 9).
 */
export class RowCountMismatchError extends BulkcheckError {
  constructor(message: string) {
    super("count_mismatch", message, {
      hint: "The output was written. Download again, or drop --strict to accept it with a warning.",
    });
  }
}

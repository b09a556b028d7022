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
  | "CELL_TOO_LONG"; // a value longer than an Excel cell holds, for xlsx output

/**
 * The service's result file is unusable as sent. Kind `unexpected`: nothing the user
 * typed is wrong, and downloading again rarely helps, so the hint says what to report.
 */
export class ResultFileError extends BulkcheckError {
  readonly code: ResultFileErrorCode;

  constructor(code: ResultFileErrorCode, message: string, details: ErrorDetails = {}) {
    super("unexpected", message, {
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

/** Rows in the result differ from what the task reported (`success_cnt`). Raised only on request (`--strict`). */
export class RowCountMismatchError extends BulkcheckError {
  constructor(message: string) {
    super("unexpected", message, {
      hint: "The output was written. Download again, or drop --strict to accept it with a warning.",
    });
  }
}

/**
 * Result handling: a task's result file (CSV or zip, header or none, columns in any
 * order) turned into clean output on disk or a stream.
 *
 * The `download` command calls `writeResults` and prints `describeSummary` on stderr.
 * For Ctrl-C it passes an AbortSignal (the promise then rejects with InterruptedError
 * after removing its temp files) and its own `TempFiles`, whose `cleanupSync()` an exit
 * handler can call if the process ends before the promise settles.
 */
export { writeResults, type ResultDestination, type ResultSourceInput, type ResultWriteOptions } from "./write-results.js";
export type { ResultSource, SourceSummary } from "./read-results.js";
export {
  assertRowCounts,
  describeMismatch,
  describeSummary,
  rowCountMismatches,
  type ResultSummary,
  type RowCountMismatch,
} from "./summary.js";
export type { CarrierCounts, SignalCounts, Tally, ValueCount } from "./tally.js";
export { OUTPUT_FORMATS, rendererFor, writeRows, type OutputFormat, type RenderOptions } from "./render.js";
export { isHeaderRow, sourceLayout, outputColumns, type SourceLayout } from "./result-rows.js";
export { TempFiles, removeStaleTempFiles } from "./temp-files.js";
export { DEFAULT_ZIP_LIMITS, type ZipLimits } from "./unzip.js";
export { DestinationExistsError, ResultFileError, RowCountMismatchError, type ResultFileErrorCode } from "./errors.js";

/**
 * Local list preparation: turns an analyst's CSV/TXT export into exactly the
 * list the service should check, and accounts for every row. The row reader and
 * the row classifier are exported for the join of results back to the source.
 */
export { prepareList, type PrepareResult } from "./prepare-list.js";
export type { PrepareOptions } from "./prepare-options.js";
export type { AmbiguousSummary, PrepareSummary } from "./summary.js";
export type { UploadChunk } from "./upload-writer.js";
export type { ColumnChoice, ColumnChosenBy } from "./column.js";
export { openRows } from "./row-reader.js";
export type { KnownDialect, ListFormat, RowSource } from "./row-source.js";
export type { SourceRecord } from "../csv/record-reader.js";
export type { ListSource } from "./input-source.js";
export type { TextEncoding } from "./decode.js";
export { createRowClassifier, type RowClassifier, type RowResult } from "./row-classifier.js";
export {
  classifyCell,
  expandScientific,
  isKnownCountry,
  precleanCell,
  REASONS,
  type CellClass,
  type Classification,
  type ClassifyOptions,
  type DigitsReading,
  type RowClass,
} from "./classify.js";
export { LIBPHONENUMBER_VERSION, type PreparationSettings } from "./settings.js";

import { createRequire } from "node:module";
import { pipeline, type Readable } from "node:stream";
import type * as CsvParse from "csv-parse";
import type * as CsvParseSync from "csv-parse/sync";
import { ResultFileError } from "./errors.js";

/**
 * csv-parse's streaming and sync parsers, each loaded (as CommonJS, synchronously)
 * the first time it is needed: a download on the fast path never loads the
 * streaming one, and every command that does not read results loads neither.
 */
const load = createRequire(import.meta.url);
let streaming: typeof CsvParse | undefined;
let sync: typeof CsvParseSync | undefined;
const streamingParser = () => (streaming ??= load("csv-parse") as typeof CsvParse);
const syncParser = () => (sync ??= load("csv-parse/sync") as typeof CsvParseSync);

/**
 * How every result CSV is read. csv-parse handles the BOM, discovers the record
 * delimiter from the first line end (`\r\n`, `\n` or `\r`), strips quoting, keeps
 * stray quotes inside unquoted fields, and skips empty lines.
 */
const CSV_OPTIONS = { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true } as const;

/** The record delimiters the fast path recognises (and pins, so csv-parse agrees with it). */
export type LineEnd = "\n" | "\r\n";

/** A csv-parse failure as the ResultFileError users see; anything else is passed through. */
function asCsvInvalid(error: unknown, label: string): unknown {
  // The two CommonJS builds each bundle their own CsvError class.
  const isCsvError = (streaming && error instanceof streaming.CsvError) || (sync && error instanceof sync.CsvError);
  if (!isCsvError) return error;
  return new ResultFileError("CSV_INVALID", `The result of ${label} is not valid CSV: ${error.message}`, { cause: error });
}

/**
 * Parses a whole CSV byte stream, yielding records in batches: everything the parser
 * has buffered at once, instead of one record per promise (which cost a fifth of the
 * time of a million-row download).
 * @throws ResultFileError `CSV_INVALID`, or the stream's own error.
 */
export async function* csvRecordBatches(bytes: Readable, label: string): AsyncGenerator<string[][]> {
  const parser = streamingParser().parse(CSV_OPTIONS);
  // Errors of either stream reach the loop below through the parser, so the callback has nothing to add.
  pipeline(bytes, parser, () => undefined);
  try {
    for await (const record of parser) {
      const batch = [record as string[]];
      for (let next: unknown = parser.read(); next !== null; next = parser.read()) batch.push(next as string[]);
      yield batch;
    }
  } catch (error) {
    throw asCsvInvalid(error, label);
  }
}

/**
 * Parses a piece of CSV text that starts at a record boundary, with the same rules
 * as `csvRecordBatches` but the record delimiter pinned to the one the whole file
 * uses, and no BOM handling (a BOM counts only at the start of the file).
 * @throws ResultFileError `CSV_INVALID`.
 */
export function parseCsvText(text: string, lineEnd: LineEnd, label: string): string[][] {
  try {
    return syncParser().parse(text, { ...CSV_OPTIONS, bom: false, record_delimiter: lineEnd }) as string[][];
  } catch (error) {
    throw asCsvInvalid(error, label);
  }
}

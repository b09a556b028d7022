import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { InterruptedError } from "../errors.js";
import type { ServiceType } from "../spec/products.js";
import { AtomicFile } from "./atomic-file.js";
import { asOutputWriteError } from "../file-system-errors.js";
import { renderXlsx, type SummaryTable } from "./format-xlsx.js";
import { resultParts, resultTable, type ResultSource, type SourceSummary, type TableContext } from "./read-results.js";
import { DEFAULT_TABLE_ROWS, renderCsvParts, rendererFor, writeText, type OutputFormat, type RenderOptions } from "./render.js";
import { rowCountMismatches, tallyTables, type ResultSummary } from "./summary.js";
import { RowTally, type Tally } from "./tally.js";
import { TempFiles, removeStaleTempFiles, tempPathFor } from "./temp-files.js";
import { DEFAULT_ZIP_LIMITS } from "./unzip.js";

export interface ResultWriteOptions {
  serviceType: ServiceType;
  /** End every row with `checked_at`, each source's date (a run's output). */
  checkedAt?: boolean;
  /** Default `csv`. */
  format?: OutputFormat;
  /** Aborting stops the download, removes temp files and rejects with InterruptedError. */
  signal?: AbortSignal;
  /** Rows expected across all sources (sum of `success_cnt`); a difference is reported in `mismatches`. */
  expectedRows?: number;
  /** Largest CSV accepted, from a zip (uncompressed) or not (default 4 GiB). */
  maxUncompressedBytes?: number;
  /** Largest compression ratio accepted for a zip entry over 1 MiB (default 200). */
  maxCompressionRatio?: number;
  /** Data rows shown by `table` (default 20). */
  tableRows?: number;
  /** Colour for `table` (default off). */
  colour?: boolean;
  /** The terminal width `table` fits into (default 80). */
  tableWidth?: number;
  /** Whether a `table` is read on a terminal (default true; see RenderOptions.terminal). */
  terminal?: boolean;
  /** Registry of temp files; pass one to call `cleanupSync()` from an exit handler. */
  temps?: TempFiles;
  /** Where a zip is spooled when the destination is a stream (default the OS temp dir). */
  tempDir?: string;
  /**
   * For `xlsx`: the Summary sheet's tables, given the rows' counts once every row is
   * written (default: the counts alone, see tallyTables).
   */
  summarySheet?: (tally: Tally, sources: readonly SourceSummary[]) => readonly SummaryTable[];
}

/**
 * A file, written atomically (refused if it exists unless `force`), or a stream the
 * caller owns, such as stdout (ended only when `end` is true).
 */
export type ResultDestination = { path: string; force?: boolean; mode?: number } | { stream: Writable; end?: boolean };

/** A source, or just its opener. */
export type ResultSourceInput = ResultSource | ResultSource["open"];

interface OutputChoice {
  format: OutputFormat;
  tableRows: number;
  colour: boolean | undefined;
  tableWidth: number | undefined;
  terminal: boolean | undefined;
  summarySheet: (() => readonly SummaryTable[]) | undefined;
}

/**
 * The output (text, or an xlsx's bytes), and a way to wait until every source is
 * released. CSV takes the fast case where a source allows it (see copyPlainLines);
 * other formats render parsed rows.
 */
function outputChunks(
  sources: readonly ResultSource[],
  context: TableContext,
  { format, tableRows, colour, tableWidth, terminal, summarySheet }: OutputChoice,
): { text: AsyncIterable<string | Uint8Array>; release: () => Promise<unknown> } {
  if (format === "csv") {
    const parts = resultParts(sources, context, true);
    return { text: renderCsvParts(parts), release: () => parts.return(undefined) };
  }
  const table = resultTable(sources, context);
  const release = () => table.return(undefined);
  if (format === "xlsx") {
    return { text: renderXlsx(table, { summary: summarySheet }), release };
  }
  const render: RenderOptions = { format, tableRows, colour, tableWidth, terminal };
  return { text: rendererFor(render)(table), release };
}

/**
 * Downloads one or more task results into one output: the spec's header once, then
 * every source's rows in source order, in the spec's column order. Zip or CSV, header
 * or none, is decided per source from its bytes. Streams end to end with flat memory.
 *
 * A file destination appears complete or not at all: on any error or abort the temp
 * file (and any spooled zip) is removed and the destination is left untouched; the
 * file system's refusals (no space, permissions) are FileSystemErrors naming it. Temp
 * files that dead runs left next to the destination are removed first.
 * @throws DestinationExistsError (before any source is opened), ResultFileError,
 *   InterruptedError on abort, or the source's own error.
 */
export async function writeResults(
  sources: readonly ResultSourceInput[],
  destination: ResultDestination,
  options: ResultWriteOptions,
): Promise<ResultSummary> {
  const temps = options.temps ?? new TempFiles();
  const format = options.format ?? "csv";
  const { signal } = options;
  let file: AtomicFile | undefined;
  let out: Writable;
  if ("path" in destination) {
    file = await AtomicFile.create(destination.path, {
      force: destination.force ?? false,
      temps,
      ...(destination.mode === undefined ? {} : { mode: destination.mode }),
    });
    out = file.stream;
  } else {
    out = destination.stream;
  }
  const spoolTarget = file?.path ?? join(options.tempDir ?? tmpdir(), "stdout");
  // Beside a file, creating it removed what killed writers spooled; elsewhere that is done here.
  if (!file) await removeStaleTempFiles(spoolTarget);
  const sourceSummaries: SourceSummary[] = [];
  const tally = new RowTally(options.serviceType);
  const tableRows = options.tableRows ?? DEFAULT_TABLE_ROWS;
  const { text, release } = outputChunks(
    sources.map((source) => (typeof source === "function" ? { open: source } : source)),
    {
      serviceType: options.serviceType,
      maxUncompressedBytes: options.maxUncompressedBytes ?? DEFAULT_ZIP_LIMITS.maxUncompressedBytes,
      maxCompressionRatio: options.maxCompressionRatio ?? DEFAULT_ZIP_LIMITS.maxCompressionRatio,
      temps,
      spoolPath: () => tempPathFor(spoolTarget, ".zip"),
      sources: sourceSummaries,
      signal,
      tally,
      ...(options.checkedAt ? { checkedAt: true } : {}),
    },
    {
      format,
      tableRows,
      colour: options.colour,
      tableWidth: options.tableWidth,
      terminal: options.terminal,
      summarySheet: () => (options.summarySheet ?? tallyTables)(tally.result(), sourceSummaries),
    },
  );
  let bytes: number;
  try {
    const end = file !== undefined || ("end" in destination && destination.end === true);
    ({ bytes } = await writeText(text, out, { end, signal }));
    await file?.commit();
  } catch (error) {
    await file?.discard();
    if (signal?.aborted) {
      throw new InterruptedError(`Download interrupted${file ? `; ${file.path} was not written` : ""}.`, { cause: error });
    }
    // The file's own stream first; a spooled zip lives beside it, so its refusals name the same path.
    throw file ? asOutputWriteError(file.explain(error), file.path) : error;
  } finally {
    // The pipeline can settle while a source is still mid-read; wait for it to release its stream and spool.
    await release();
  }
  const counts = tally.result();
  // Off a terminal, a table is every row as TSV.
  const boxed = format === "table" && options.terminal !== false;
  return {
    ...counts,
    serviceType: options.serviceType,
    format: format === "table" && !boxed ? "tsv" : format,
    rowsWritten: boxed ? Math.min(counts.rows, tableRows) : counts.rows,
    bytes,
    path: file?.path,
    sources: sourceSummaries,
    expectedRows: options.expectedRows,
    mismatches: rowCountMismatches(sourceSummaries, counts.rows, options.expectedRows),
    staleTempFilesRemoved: [...(file?.staleTempFilesRemoved ?? [])],
  };
}

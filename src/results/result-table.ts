import { addAbortSignal, pipeline, type Readable } from "node:stream";
import { CsvError, parse } from "csv-parse";
import { resultColumns, type ServiceType } from "../spec/products.js";
import { openResultBody } from "./body.js";
import { ResultFileError } from "./errors.js";
import { arrangeRow, outputColumns, projection, sourceLayout } from "./header.js";
import type { TempFiles } from "./temp-files.js";
import type { ZipLimits } from "./zip.js";

/** One task's result: how to open its body (a fresh download each call) and what to expect of it. */
export interface ResultSource {
  /** Opens the body. Called once, when its turn comes; re-requesting an expired URL is the opener's job. */
  open(signal?: AbortSignal): Promise<Readable>;
  /** Rows the task reported (`success_cnt`), checked after reading. */
  expectedRows?: number;
  /** Names the source in messages and the summary, e.g. the task id. */
  label?: string;
}

/** What reading one source found. */
export interface SourceSummary {
  label: string;
  container: "csv" | "zip";
  entryName?: string;
  hasHeader: boolean;
  /** Spec columns the file lacked (written empty). */
  missingColumns: readonly string[];
  /** Columns beyond the spec's (kept at the end). */
  extraColumns: readonly string[];
  rows: number;
  expectedRows?: number;
}

export interface TableContext extends ZipLimits {
  serviceType: ServiceType;
  temps: TempFiles;
  /** A fresh spool path for a zipped source; called once per zip. */
  spoolPath(): string;
  signal?: AbortSignal;
  /** Filled in as sources are read, one entry per source opened. */
  sources: SourceSummary[];
}

const CSV_OPTIONS = { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true } as const;

/** Parses CSV bytes into arrays of strings; BOM, CRLF and quoted fields are csv-parse's job. */
async function* csvRecords(bytes: Readable, label: string): AsyncGenerator<string[]> {
  const parser = parse(CSV_OPTIONS);
  // Errors of either stream reach the loop below through the parser, so the callback has nothing to add.
  pipeline(bytes, parser, () => undefined);
  try {
    for await (const record of parser) yield record as string[];
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    throw new ResultFileError("CSV_INVALID", `The result of ${label} is not valid CSV: ${error.message}`, { cause: error });
  }
}

/**
 * Reads the sources in order and yields one table: the output header first, then
 * every data row in output column order. The header is fixed by the first source that
 * has any row (spec columns, then its extras); later sources are mapped onto it. Each
 * source is opened only when the previous one is done, and released (stream destroyed,
 * spool removed) before the next opens or when the consumer stops early.
 * @throws ResultFileError for an unusable file; InterruptedError is the caller's mapping of an abort.
 */
export async function* resultTable(
  sources: readonly ResultSource[],
  context: TableContext,
): AsyncGenerator<readonly string[]> {
  let header: readonly string[] | undefined;
  for (const [index, source] of sources.entries()) {
    context.signal?.throwIfAborted();
    const label = source.label ?? `result ${index + 1}`;
    const raw = await source.open(context.signal);
    if (context.signal) addAbortSignal(context.signal, raw);
    const body = await openResultBody(raw, {
      spoolPath: context.spoolPath(),
      temps: context.temps,
      signal: context.signal,
      maxUncompressedBytes: context.maxUncompressedBytes,
      maxCompressionRatio: context.maxCompressionRatio,
    });
    const summary: SourceSummary = {
      label,
      container: body.container,
      entryName: body.entryName,
      hasHeader: false,
      missingColumns: [],
      extraColumns: [],
      rows: 0,
      expectedRows: source.expectedRows,
    };
    context.sources.push(summary);
    try {
      let indexes: number[] | undefined;
      let width = 0;
      for await (const record of csvRecords(body.stream, label)) {
        if (!indexes) {
          const layout = sourceLayout(record, context.serviceType);
          summary.hasHeader = layout.hasHeader;
          summary.missingColumns = layout.missing;
          summary.extraColumns = layout.extras;
          if (!header) {
            header = outputColumns(layout, context.serviceType);
            yield header;
          }
          indexes = projection(layout.columns, header);
          width = layout.columns.length;
          if (layout.hasHeader) continue;
        }
        if (record.length > width) {
          throw new ResultFileError(
            "ROW_TOO_WIDE",
            `In the result of ${label}, data row ${summary.rows + 1} has ${record.length} fields; the first row has ${width}.`,
          );
        }
        summary.rows += 1;
        yield arrangeRow(record, indexes);
      }
    } finally {
      await body.close();
    }
  }
  if (!header) yield resultColumns(context.serviceType);
}

import { tmpdir } from "node:os";
import { join } from "node:path";
import { addAbortSignal, type Readable } from "node:stream";
import { CsvSyntaxError } from "../csv/errors.js";
import { RecordReader, type SourceRecord } from "../csv/record-reader.js";
import { resultColumns, type ServiceType } from "../spec/products.js";
import { ResultFileError } from "./errors.js";
import { openResultBody, textPieces } from "./result-body.js";
import { checkTaskCounts, resultBytesBound, ResultRowRules, type TaskCounts, type UploadedIdentifiers } from "./result-rules.js";
import {
  SourceRows,
  adoptFirstRecord,
  copyPlainLines,
  isIdentity,
  plainLines,
  type OutputHeader,
  type SourceFindings,
} from "./result-rows.js";
import type { RowTally, SignalCounts } from "./tally.js";
import { TempFiles, removeStaleTempFiles, tempPathFor } from "./temp-files.js";
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from "./unzip.js";

/*
 * Reading results: task results (CSV or zip, header or none, columns in any order) read
 * in order into one table in the output's column order, each row checked against the
 * rules of result-rules.ts as it is read. writeResults (write-results.ts) writes the
 * table out; readResults hands it to code that consumes rows (the join, retry-failed).
 *
 * The table travels in parts rather than row by row, so per-row overhead is paid once
 * per batch. The first part is always the output header alone, as `rows`.
 */

/** Rows as fields, in output column order. */
export interface RowsPart {
  rows: readonly (readonly string[])[];
}

/** Data rows as CSV text already in output form, exactly as `delimitedLine` would write them (the fast case, copyPlainLines). */
export interface CsvPart {
  csv: string;
}

export type TablePart = RowsPart | CsvPart;

/** One task's result: how to open its body (a fresh download each call) and what to expect of it. */
export interface ResultSource {
  /** Opens the body. Called once, when its turn comes; re-requesting an expired URL is the opener's job. */
  open(signal?: AbortSignal): Promise<Readable>;
  /** Rows the task reported (`success_cnt`), checked after reading. */
  expectedRows?: number;
  /** Names the source in messages and the summary, e.g. the task id. */
  label?: string;
  /** The task whose result this is, as last checked: its counts bound what the result may hold (see result-rules.ts). */
  task?: TaskCounts;
  /** The identifiers uploaded to that task, where they are known: every row's identifier must be one of them. */
  uploaded?: UploadedIdentifiers;
  /**
   * Numbers `ledger forget` erased since the task was given them, while a run open then could
   * bring them back: their rows are left out, as numbers without a result (see SourceRows).
   */
  withheld?: UploadedIdentifiers;
  /** When the result was checked (ISO 8601): the `checked_at` of its rows, when the output has that column. */
  checkedAt?: string;
  /** Sees the body's bytes as they are read (the ledger keeps them), and is told once the whole result was read and kept to the rules. */
  recorder?: ResultRecorder;
}

/**
 * Sees a result's body as it is read, its bytes untouched (see ResultSource.recorder): the
 * rows are not parsed for it, so CSV lines are still copied through to the output.
 */
export interface ResultRecorder {
  /** The body, each time the source is opened (a transfer that starts again opens it afresh); returns the stream to read instead. */
  watch(body: Readable): Readable;
  /** The whole result was read, and every row kept to the rules. */
  finish(): Promise<void>;
}

/** The column an output of a run ends with: when each row's result was checked. */
export const CHECKED_AT_COLUMN = "checked_at";

/** What reading one source found. */
export interface SourceSummary extends SourceFindings {
  label: string;
  container: "csv" | "zip";
  entryName?: string;
  expectedRows?: number;
  /** Whether some of its rows were copied through as CSV text (the fast case) rather than parsed. */
  copied: boolean;
  /** For a signal product, this source's own true/false split (a task has one country). */
  signal?: SignalCounts;
}

export interface TableContext extends ZipLimits {
  serviceType: ServiceType;
  temps: TempFiles;
  /** A fresh spool path for a zipped source; called once per zip. */
  spoolPath(): string;
  signal?: AbortSignal;
  /** Filled in as sources are read, one entry per source opened. */
  sources: SourceSummary[];
  /** Counts every data row (headers excluded) as it is read. */
  tally?: RowTally;
  /** End every row with CHECKED_AT_COLUMN, each source's `checkedAt`. */
  checkedAt?: boolean;
}

/**
 * Reads the sources in order and yields one table in parts: the output header first,
 * then every data row in output column order. The header is fixed by the first source
 * that has any row (spec columns, then its extras); later sources are mapped onto it.
 * Each source is opened only when the previous one is done, and released (stream
 * destroyed, spool removed) before the next opens or when the consumer stops early.
 *
 * With `passthrough` (for CSV output only), plain lines of a source whose columns already
 * are the output's are copied through as CSV text (`CsvPart`) instead of being parsed;
 * that CSV is byte-identical to what rendering the parsed rows would give.
 *
 * Every source keeps the rules of result-rules.ts: each task's counts are checked
 * before any source is opened, and each row as it is read.
 * @throws ResultFileError for an unusable file, or one that breaks the rules;
 *   InterruptedError is the caller's mapping of an abort.
 */
export function resultParts(sources: readonly ResultSource[], context: TableContext, passthrough?: false): AsyncGenerator<RowsPart>;
export function resultParts(sources: readonly ResultSource[], context: TableContext, passthrough: true): AsyncGenerator<TablePart>;
export async function* resultParts(
  sources: readonly ResultSource[],
  context: TableContext,
  passthrough = false,
): AsyncGenerator<TablePart> {
  const header: OutputHeader = {};
  let headerPassed = false;
  for (const source of sources) if (source.task) checkTaskCounts(source.task);
  for (const [index, source] of sources.entries()) {
    context.signal?.throwIfAborted();
    const label = source.label ?? `result ${index + 1}`;
    const opened = await source.open(context.signal);
    const raw = source.recorder ? source.recorder.watch(opened) : opened;
    if (context.signal) addAbortSignal(context.signal, raw);
    const body = await openResultBody(raw, {
      spoolPath: context.spoolPath(),
      temps: context.temps,
      signal: context.signal,
      // A task's result is bounded by what its numbers' rows can take; a ledger's or a file's by the cap alone.
      ...(source.task
        ? {
            maxUncompressedBytes: resultBytesBound(source.task.total, context.serviceType, context.maxUncompressedBytes),
            cap: { numbers: source.task.total, ...(source.label === undefined ? {} : { label: source.label }) },
          }
        : { maxUncompressedBytes: context.maxUncompressedBytes, ...(source.label === undefined ? {} : { cap: { label: source.label } }) }),
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
      copied: false,
    };
    const signal = context.tally?.beginSource();
    if (signal) summary.signal = signal;
    context.sources.push(summary);
    try {
      const parts = sourceParts(body.stream, {
        label,
        summary,
        header,
        serviceType: context.serviceType,
        tally: context.tally,
        rules: new ResultRowRules(label, source.task, source.uploaded),
        ...(source.withheld ? { withheld: source.withheld } : {}),
        // Copying lines through unread would keep them from the checked_at column, and withheld rows in.
        passthrough: passthrough && !context.checkedAt && !source.withheld,
      });
      for await (const part of parts) {
        // Lines copied through as CSV (only when nothing here needs the rows) go on as they are.
        if (!("rows" in part)) {
          yield part;
          continue;
        }
        // The output header comes first, alone: every part after it is data.
        if (!headerPassed) {
          headerPassed = true;
          yield context.checkedAt ? { rows: part.rows.map((row) => [...row, CHECKED_AT_COLUMN]) } : part;
          continue;
        }
        yield context.checkedAt ? { rows: part.rows.map((row) => [...row, source.checkedAt ?? ""]) } : part;
      }
      await source.recorder?.finish();
    } finally {
      await body.close();
    }
  }
  if (!header.columns) {
    const columns = resultColumns(context.serviceType);
    yield { rows: [context.checkedAt ? [...columns, CHECKED_AT_COLUMN] : columns] };
  }
}

/** `resultParts` row by row: the header, then every data row, for code that consumes rows. */
export async function* resultTable(sources: readonly ResultSource[], context: TableContext): AsyncGenerator<readonly string[]> {
  for await (const part of resultParts(sources, context)) yield* part.rows;
}

/** One source being read, and what its rows are counted into. */
interface SourceReading {
  label: string;
  summary: SourceSummary;
  header: OutputHeader;
  serviceType: ServiceType;
  tally?: RowTally;
  /** What each of its rows must keep to. */
  rules: ResultRowRules;
  /** Numbers whose rows are left out (ResultSource.withheld). */
  withheld?: UploadedIdentifiers;
  /** Copy plain lines through as CSV text where the source allows (only for CSV output). */
  passthrough: boolean;
}

/**
 * One source's table parts: the output header first if this source fixes it, then its
 * data rows. Records are read by the CSV module's RecordReader (empty lines skipped) and
 * rearranged into output order. With `passthrough`, a piece of plain lines (no quotes)
 * of a source whose columns already are the output's is copied through as text
 * instead (copyPlainLines); both give the same CSV.
 * @throws ResultFileError for an unusable file, or the stream's own error.
 */
async function* sourceParts(bytes: Readable, reading: SourceReading): AsyncGenerator<TablePart> {
  const reader = new RecordReader(",");
  let rows: SourceRows | undefined;
  /** The records as output rows; the first record fixes the shape (and maybe the output header). */
  function* arranged(records: readonly SourceRecord[]): Generator<TablePart> {
    const out: string[][] = [];
    const take = (fields: readonly string[]) => {
      const row = rows!.accept(fields);
      if (row) out.push(row);
    };
    for (const { fields, raw } of records) {
      if (raw === "") continue;
      if (rows) {
        take(fields);
        continue;
      }
      const { shape, fixedHeader } = adoptFirstRecord(fields, reading.summary, reading.header, reading.serviceType);
      if (fixedHeader) yield { rows: [fixedHeader] };
      rows = new SourceRows(reading.label, shape, reading.summary, reading.rules, reading.tally, reading.withheld);
      if (!shape.hasHeader) take(fields);
    }
    if (out.length > 0) yield { rows: out };
  }
  for await (const text of textPieces(bytes)) {
    const plain = rows && reading.passthrough && isIdentity(rows.shape) && reader.atRecordStart ? plainLines(text) : undefined;
    if (rows && plain !== undefined) {
      const { csv, lines } = copyPlainLines(plain, rows);
      reader.skipLines(lines);
      reading.summary.copied = true;
      yield { csv };
    } else {
      yield* arranged(readRecords(() => reader.push(text), reading.label));
    }
  }
  yield* arranged(readRecords(() => reader.end(), reading.label));
  reading.rules.finish();
}

function readRecords(read: () => SourceRecord[], label: string): SourceRecord[] {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    throw new ResultFileError("CSV_INVALID", `The result of ${label} is not valid CSV: ${error.message}`, { cause: error });
  }
}

/**
 * The rows of one or more results (header first, spec column order), for code
 * that consumes results rather than writing them out: the join and retry-failed.
 * A zipped body is spooled to the OS temp directory and removed afterwards (or, after
 * a kill, by the next reader).
 */
export async function* readResults(
  sources: readonly ResultSource[],
  options: { serviceType: ServiceType; signal?: AbortSignal; checkedAt?: boolean },
): AsyncGenerator<readonly string[]> {
  for await (const part of readResultParts(sources, options)) yield* part.rows;
}

/** `readResults` in parts of many rows (the header alone first): for code that goes through every row of a big result. */
export async function* readResultParts(
  sources: readonly ResultSource[],
  options: { serviceType: ServiceType; signal?: AbortSignal; checkedAt?: boolean },
): AsyncGenerator<RowsPart> {
  const temps = new TempFiles();
  const spoolTarget = join(tmpdir(), "bulkcheck-result");
  // What a killed reader spooled is recognisable by its name: the next reader removes it.
  await removeStaleTempFiles(spoolTarget);
  try {
    yield* resultParts(sources, {
      ...DEFAULT_ZIP_LIMITS,
      serviceType: options.serviceType,
      temps,
      spoolPath: () => tempPathFor(spoolTarget, ".zip"),
      sources: [],
      signal: options.signal,
      ...(options.checkedAt ? { checkedAt: true } : {}),
    });
  } finally {
    temps.cleanupSync();
  }
}

/**
 * Reads one result through the rules of result-rules.ts, keeping nothing: for a result
 * fetched now and written out later, checked while what its task was given is known.
 * @throws ResultFileError when the result is unusable or breaks the rules.
 */
export async function checkResult(source: ResultSource, options: { serviceType: ServiceType; signal?: AbortSignal }): Promise<void> {
  for await (const _row of readResults([source], options));
}

/** identifier → the rest of its result row; what the join holds in memory (and nothing else). */
export async function resultMap(
  rows: AsyncIterable<readonly string[]>,
): Promise<{ columns: readonly string[]; byIdentifier: Map<string, readonly string[]> }> {
  let columns: readonly string[] = [];
  const byIdentifier = new Map<string, readonly string[]>();
  for await (const row of rows) {
    if (columns.length === 0) {
      columns = row.slice(1);
      continue;
    }
    if (row[0]) byIdentifier.set(row[0], row.slice(1));
  }
  return { columns, byIdentifier };
}

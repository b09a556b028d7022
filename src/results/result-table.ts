import { addAbortSignal, type Readable } from "node:stream";
import { resultColumns, type ServiceType } from "../spec/products.js";
import { openResultBody } from "./body.js";
import { sourceParts } from "./read-source.js";
import { checkTaskCounts, ResultRowRules, type TaskCounts, type UploadedIdentifiers } from "./result-rules.js";
import type { OutputHeader } from "./source-rows.js";
import type { RowsPart, TablePart } from "./table-part.js";
import type { RowTally, SignalCounts } from "./tally.js";
import type { TempFiles } from "./temp-files.js";
import type { ZipLimits } from "./zip-limits.js";

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
  /** When the result was checked (ISO 8601): the `checked_at` of its rows, when the output has that column. */
  checkedAt?: string;
  /** Takes the rows as they are read (the ledger keeps them), and is told once the whole result was read and kept to the rules. */
  recorder?: ResultRecorder;
}

/** Receives a result's rows as they are read (see ResultSource.recorder). */
export interface ResultRecorder {
  /** Data rows in the output's column order, `header` naming the columns. */
  add(header: readonly string[], rows: readonly (readonly string[])[]): Promise<void>;
  /** The whole result was read, and every row kept to the rules. */
  finish(header: readonly string[]): Promise<void>;
}

/** The column an output of a run ends with: when each row's result was checked. */
export const CHECKED_AT_COLUMN = "checked_at";

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
        // Copying lines through unread would keep them from a recorder and from the checked_at column.
        passthrough: passthrough && !source.recorder && !context.checkedAt,
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
        await source.recorder?.add(header.columns!, part.rows);
        yield context.checkedAt ? { rows: part.rows.map((row) => [...row, source.checkedAt ?? ""]) } : part;
      }
      if (header.columns) await source.recorder?.finish(header.columns);
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

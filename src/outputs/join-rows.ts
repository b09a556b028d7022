import { once } from "node:events";
import type { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { byteOrderMark, encodeText } from "../csv/encodings.js";
import type { SourceRecord } from "../csv/record-reader.js";
import { csvText, sourceRecordText, type VerbatimCells } from "../csv/write.js";
import type { RowClass } from "../prepare/classify.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { identifierKey, type IdentifierKey } from "../spec/identifier-key.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import { createRowClassifier } from "../prepare/row-classifier.js";
import { openRows } from "../prepare/row-reader.js";
import type { RowSource } from "../prepare/row-source.js";
import type { PreparationSettings } from "../prepare/settings.js";
import { ResultFileError } from "../results/errors.js";
import { renderXlsx, type SummaryTable } from "../results/format-xlsx.js";
import { CHECKED_AT_COLUMN } from "../results/read-results.js";
import type { UnsentNumbers } from "../tasks/download.js";
import type { ResultCounts } from "../tasks/summary-sheet.js";

/**
 * What each source row became, in the `bulkcheck_status` column. A kept number is
 * `checked` (a task of the run checked it, with a result), `reused` (its result came from
 * the ledger, or from another run's task in flight: checked before, not charged now),
 * `no_result` (the service answered without a result: now, or within --max-age) or
 * `waiting` (never sent: too few for a task under --pad never; a later run checks it), or
 * `failed` (its task failed, in a chain that went on without it: the next run checks it again).
 */
export type JoinStatus = "checked" | "reused" | "no_result" | "waiting" | "failed" | Exclude<RowClass, "kept">;

export const JOIN_STATUS_COLUMN = "bulkcheck_status";

/** Put before every added column's name when a source column already has one of those names. */
const RESULT_COLUMN_PREFIX = "bc_";

export interface JoinInput {
  sourcePath: string;
  /** How the list was prepared when it was submitted (from the journal), so identifiers match exactly. */
  settings: PreparationSettings;
  /** Result columns after `identifier`, and identifier → those values. */
  results: { columns: readonly string[]; byIdentifier: ReadonlyMap<string, readonly string[]> };
  out: Writable;
  signal?: AbortSignal;
  /** `csv` (the default): the source's own text format; `xlsx`: an Excel workbook. */
  format?: "csv" | "xlsx";
  /**
   * --safe-csv: the source's own cells that would start a formula get a `'` in front,
   * as the result's cells always do; by default the source comes back as it was.
   */
  safeCsv?: boolean;
  /**
   * The tasks whose results these are, when the source is exactly the list they were
   * prepared from (unchanged, same libphonenumber-js): its kept rows are then the numbers
   * uploaded, and a result row that is none of them breaks the rules (result-rules.ts).
   * Absent: not checked.
   */
  uploadedBy?: readonly string[];
  /** The runs' numbers none of their tasks was given: which rows are `reused`, and which `waiting`. */
  unsent?: readonly UnsentNumbers[];
  /** For `xlsx`: the Summary sheet's tables, given the join's counts (default: the rows by status). */
  summarySheet?: (summary: JoinSummary) => readonly SummaryTable[];
  /** The columns of a chain's later products, after the first product's (see LaterColumns). */
  later?: LaterColumns;
}

/**
 * Columns added after the first product's, each row's values given by its identifier
 * (undefined for a row that kept none) and what the row became for the first product:
 * a chain's later products (chain/chain-columns.ts).
 */
export interface LaterColumns {
  /** The products whose columns these are, in order (named in what the join tells). */
  products: readonly string[];
  names: readonly string[];
  values(identifier: string | undefined, status: JoinStatus): readonly string[];
  /** Once every row is written: the xlsx Summary sheet's tables of these products (their runs, their rows by status). */
  summary?(prices: Record<ServiceType, number> | undefined): readonly SummaryTable[];
}

export interface JoinSummary {
  rows: number;
  byStatus: Record<JoinStatus, number>;
  /** The names of the added columns as written: `identifier`, the result columns, `bulkcheck_status`, each prefixed when needed. */
  addedColumns: string[];
  /** "bc_" when a source column had the name of an added one (so every added column got it), else "". */
  prefix: string;
}

/** What a join wrote, and of which tasks. */
export interface JoinOutcome {
  summary: JoinSummary;
  serviceType: ServiceType;
  /** The tasks as checked before the download. */
  tasks: Task[];
}

/** A source row and what the join adds after its columns: `identifier`, the result columns, `bulkcheck_status`. */
export interface JoinedRow {
  record: SourceRecord;
  tail: readonly string[];
}

/** The source as the join reads it, and its rows with what they matched. */
export interface JoinSource {
  rows: RowSource;
  /** The columns the join adds, named as written (see addedColumnNames). */
  added: readonly string[];
  /** Fields of the widest row, to pad short rows to so the added columns line up under their header. */
  width: number;
  joined: () => AsyncGenerator<JoinedRow[], void, undefined>;
}

/**
 * Writes the source's rows in their original order followed by `identifier`, the
 * product's result columns and `bulkcheck_status`. Each row's identifier is recomputed
 * exactly as preparation computed it, so `07400 123456` finds the result of
 * `447400123456`; a duplicate gets its first occurrence's result. The source is
 * streamed a second time; only the result map is held in memory.
 *
 * As CSV, a text source comes back in its original form (each record's own text, the
 * file's delimiter, line ends, encoding and byte-order mark), and a workbook's sheet as
 * UTF-8 CSV of its cells' text. As xlsx (see joinWorkbook), every source value is a text
 * cell. A source without a header gets one (`column_1`…, or `phone` for a plain list),
 * so the result columns are named.
 */
export async function joinResults(input: JoinInput): Promise<JoinSummary> {
  const { source, summary, uploadedFound } = await openJoinSource(input);
  try {
    if (input.format === "xlsx") {
      await joinWorkbook(source, input, summary);
    } else {
      await joinText(source, input);
    }
  } finally {
    await source.rows.close();
  }
  if (input.uploadedBy) checkAllUploaded(input.results.byIdentifier, uploadedFound, input.uploadedBy, input.sourcePath);
  return summary;
}

/**
 * Refuses results with rows for numbers that were not uploaded: identifiers no kept
 * row of the source found (`uploadedFound`). The caller discards what was written.
 * @throws ResultFileError `IDENTIFIER_NOT_UPLOADED`.
 */
function checkAllUploaded(
  results: ReadonlyMap<string, unknown>,
  uploadedFound: IdentifierSet,
  taskIds: readonly string[],
  sourcePath: string,
): void {
  if (uploadedFound.size === results.size) return;
  const strangers = [...results.keys()].filter((identifier) => !uploadedFound.has(identifierKey(identifier)));
  throw new ResultFileError(
    "IDENTIFIER_NOT_UPLOADED",
    `${strangers.length} of the ${results.size} rows in the result of ${taskIds.map((id) => `task ${id}`).join(", ")} ` +
      `have an identifier that is none of the numbers uploaded from ${sourcePath} (the first: ${strangers[0]}).`,
  );
}

async function openJoinSource(input: JoinInput): Promise<{ source: JoinSource; summary: JoinSummary; uploadedFound: IdentifierSet }> {
  const { settings } = input;
  const rows = await openRows(
    input.sourcePath,
    {
      ...(settings.delimiter === undefined ? {} : { delimiter: settings.delimiter }),
      hasHeader: settings.hasHeader,
      encoding: settings.encoding,
      ...(settings.sheet === undefined ? {} : { sheet: settings.sheet }),
    },
    input.signal,
  );
  const classifier = createRowClassifier(settings);
  // A run's results end with when each was checked: in a join that goes last, after the status, as bc_checked_at.
  const dated = input.results.columns.at(-1) === CHECKED_AT_COLUMN;
  const resultColumns = dated ? input.results.columns.slice(0, -1) : input.results.columns;
  const empty = input.results.columns.map(() => "");
  const { names, prefix } = addedColumnNames(rows.header?.fields ?? [], resultColumns, input.later?.names ?? []);
  const later = input.later?.names.map((name) => prefix + name) ?? [];
  const addedColumns = [...(dated ? [...names, `${RESULT_COLUMN_PREFIX}${CHECKED_AT_COLUMN}`] : names), ...later];
  const summary: JoinSummary = {
    rows: 0,
    byStatus: {
      checked: 0,
      reused: 0,
      no_result: 0,
      waiting: 0,
      failed: 0,
      invalid: 0,
      no_code: 0,
      other_country: 0,
      duplicate: 0,
      blank: 0,
      below_min_task: 0,
    },
    addedColumns,
    prefix,
  };
  /** The identifiers of results that a kept row (an uploaded number) found. */
  const uploadedFound = new IdentifierSet();
  const unsent = input.unsent ?? [];
  const keptStatus = (key: IdentifierKey, found: boolean): JoinStatus => {
    if (found) return unsent.some((numbers) => numbers.reused.has(key)) ? "reused" : "checked";
    if (unsent.some((numbers) => numbers.waiting.has(key))) return "waiting";
    return unsent.some((numbers) => numbers.failed?.has(key)) ? "failed" : "no_result";
  };
  async function* joined(): AsyncGenerator<JoinedRow[], void, undefined> {
    for await (const batch of rows.batches()) {
      input.signal?.throwIfAborted();
      yield batch.map((record) => {
        const outcome = classifier.classify(record.fields[settings.column.index] ?? "", record.line);
        const found = outcome.identifier === undefined ? undefined : input.results.byIdentifier.get(outcome.identifier);
        if (found && outcome.class === "kept") uploadedFound.firstLineOf(identifierKey(outcome.identifier!), record.line);
        const status: JoinStatus =
          outcome.class === "kept" ? keptStatus(identifierKey(outcome.identifier!), found !== undefined) : outcome.class;
        const matched = outcome.class === "kept" || outcome.class === "duplicate";
        summary.rows++;
        summary.byStatus[status]++;
        const values = matched ? (found ?? empty) : empty;
        const identifier = matched ? outcome.identifier! : "";
        const tail = dated ? [identifier, ...values.slice(0, -1), status, values.at(-1)!] : [identifier, ...values, status];
        if (input.later) tail.push(...input.later.values(matched ? identifier : undefined, status));
        return { record, tail };
      });
    }
  }
  const source = { rows, added: addedColumns, width: rows.header?.fields.length ?? rows.columnCount, joined };
  return { source, summary, uploadedFound };
}

/**
 * The added columns' names. When any source column already has one of them
 * (compared as people read them: case and surrounding spaces ignored), every
 * added column gets the `bc_` prefix: one rule a script can rely on, rather
 * than renaming only the columns that clash.
 */
function addedColumnNames(
  sourceHeader: readonly string[],
  resultColumns: readonly string[],
  later: readonly string[],
): { names: string[]; prefix: string } {
  const added = ["identifier", ...resultColumns, JOIN_STATUS_COLUMN];
  const taken = new Set(sourceHeader.map((name) => name.trim().toLowerCase()));
  const prefix = [...added, ...later].some((name) => taken.has(name)) ? RESULT_COLUMN_PREFIX : "";
  return { names: added.map((name) => prefix + name), prefix };
}

/** The header a source without one gets: `phone` for a plain list, `column_1`… otherwise. */
export function defaultHeader(rows: RowSource): string[] {
  return rows.format.kind === "txt" ? ["phone"] : Array.from({ length: rows.columnCount }, (_, i) => `column_${i + 1}`);
}

/**
 * The join as text: a text source's records written back unchanged, in its encoding
 * (see joinResults), and the added columns neutralised where a value would start a
 * formula (the service's values never are one).
 */
async function joinText({ rows, added, width, joined }: JoinSource, input: JoinInput): Promise<void> {
  const { encoding } = input.settings;
  const delimiter = rows.format.delimiter ?? ",";
  const plainList = rows.format.kind === "txt";
  // Quoted like the source: every field when its header quotes every field, otherwise only where needed.
  const csv = { delimiter, lineEnd: rows.lineEnding, quoteAll: Boolean(rows.header && isFullyQuoted(rows.header.raw, delimiter)) };
  const fields = (values: readonly string[], verbatim: VerbatimCells = false) => csvText([values], { ...csv, verbatim });
  const safe = Boolean(input.safeCsv);
  // The source's rows go back in the encoding they came in, so its own columns are byte for byte what they were.
  const write = async (text: string | Buffer) => {
    const bytes = typeof text === "string" ? encodeText(text, encoding) : text;
    if (!input.out.write(bytes)) await once(input.out, "drain", { signal: input.signal });
  };
  await write(byteOrderMark(encoding));
  await write(
    rows.header ? sourceRecordText(rows.header, safe, csv) + delimiter + fields(added) : fields([...defaultHeader(rows), ...added]),
  );
  for await (const batch of joined()) {
    let text = "";
    for (const { record, tail } of batch) {
      // A plain list's line is a value to quote; a CSV record's text (a sheet row's, as CSV) is written back unchanged.
      text += plainList
        ? fields([record.raw, ...tail], (column) => column === 0 && !safe)
        : sourceRecordText(record, safe, csv) +
          delimiter.repeat(Math.max(0, width - Math.max(1, record.fields.length))) +
          delimiter +
          fields(tail);
    }
    await write(text);
  }
}

/** The kept rows as a summary counts them: checked now, reused, without a result, and waiting for a later run. */
export function joinCounts(summary: JoinSummary): Required<ResultCounts> {
  const { checked, reused, no_result: noResult, waiting } = summary.byStatus;
  return { checked, reused, noResult, waiting };
}

/** The join's rows by `bulkcheck_status`, as a table of an xlsx Summary sheet. */
export function statusTable(summary: JoinSummary): SummaryTable {
  return {
    heading: [JOIN_STATUS_COLUMN, "Rows"],
    rows: [...Object.entries(summary.byStatus), ["Rows written", summary.rows] as const],
  };
}

function isFullyQuoted(raw: string, delimiter: string): boolean {
  return raw.startsWith('"') && raw.endsWith('"') && raw.split(`"${delimiter}"`).length > 1;
}

/**
 * The join as an Excel workbook: one sheet of the source's rows, in order, each source
 * value a text cell (a workbook's cells as the reader showed them, so digits stay digits
 * and `=1+1` stays text), padded to the source's width, then the added columns; then a
 * Summary sheet. Streamed into `input.out` with its backpressure.
 */
async function joinWorkbook(source: JoinSource, input: JoinInput, summary: JoinSummary): Promise<void> {
  const { rows, added, width, joined } = source;
  const plainList = rows.format.kind === "txt";
  const sourceHeader = rows.header ? padded(rows.header.fields, width) : defaultHeader(rows);
  async function* table(): AsyncGenerator<readonly string[]> {
    yield [...sourceHeader, ...added];
    for await (const batch of joined()) {
      for (const { record, tail } of batch) yield [...(plainList ? [record.raw] : padded(record.fields, width)), ...tail];
    }
  }
  const workbook = renderXlsx(table(), {
    textColumns: sourceHeader.length,
    summary: () => input.summarySheet?.(summary) ?? [statusTable(summary)],
  });
  await pipeline(workbook, input.out, { end: false, ...(input.signal ? { signal: input.signal } : {}) });
}

function padded(fields: readonly string[], width: number): readonly string[] {
  return fields.length >= width ? fields : [...fields, ...new Array<string>(width - fields.length).fill("")];
}

import type { Writable } from "node:stream";
import { once } from "node:events";
import { byteOrderMark, encodeText } from "../csv/encodings.js";
import { csvText } from "../csv/write.js";
import { openRows } from "../prepare/row-reader.js";
import { createRowClassifier } from "../prepare/row-classifier.js";
import type { PreparationSettings } from "../prepare/settings.js";
import type { RowClass } from "../prepare/classify.js";

/** What each source row became, in the `bulkcheck_status` column. */
export type JoinStatus = "checked" | "no_result" | Exclude<RowClass, "kept">;

export const JOIN_STATUS_COLUMN = "bulkcheck_status";

/** Put before every added column's name when a source column already has one of those names. */
export const RESULT_COLUMN_PREFIX = "bc_";

export interface JoinInput {
  sourcePath: string;
  /** How the list was prepared when it was submitted (from the journal), so identifiers match exactly. */
  settings: PreparationSettings;
  /** Result columns after `identifier`, and identifier → those values. */
  results: { columns: readonly string[]; byIdentifier: ReadonlyMap<string, readonly string[]> };
  out: Writable;
  signal?: AbortSignal;
}

export interface JoinSummary {
  rows: number;
  byStatus: Record<JoinStatus, number>;
  /** The names of the added columns as written: `identifier`, the result columns, `bulkcheck_status`, each prefixed when needed. */
  addedColumns: string[];
  /** "bc_" when a source column had the name of an added one (so every added column got it), else "". */
  prefix: string;
}

/**
 * Writes the source's rows in their original order and form (each record's own
 * text, the file's delimiter, line ends, encoding and byte-order mark) followed by `identifier`, the
 * product's result columns and `bulkcheck_status`. Each row's identifier is
 * recomputed exactly as preparation computed it, so `07400 123456` finds the
 * result of `447400123456`; a duplicate gets its first occurrence's result. The
 * source is streamed a second time; only the result map is held in memory.
 * A source without a header gets one (`column_1`…, or `phone` for a plain list),
 * so the result columns are named.
 */
export async function joinResults(input: JoinInput): Promise<JoinSummary> {
  const { settings } = input;
  const rows = await openRows(input.sourcePath, {
    ...(settings.delimiter === undefined ? {} : { delimiter: settings.delimiter }),
    hasHeader: settings.hasHeader,
    encoding: settings.encoding,
  });
  const classifier = createRowClassifier(settings);
  const delimiter = settings.delimiter ?? ",";
  const eol = rows.lineEnding;
  const empty = input.results.columns.map(() => "");
  // Short rows are padded so the result columns line up under their header.
  const width = rows.header?.fields.length ?? rows.columnCount;
  const { names: addedColumns, prefix } = addedColumnNames(rows.header?.fields ?? [], input.results.columns);
  const summary: JoinSummary = {
    rows: 0,
    byStatus: { checked: 0, no_result: 0, invalid: 0, no_code: 0, other_country: 0, duplicate: 0, blank: 0 },
    addedColumns,
    prefix,
  };
  // Quoted like the source: every field when its header quotes every field, otherwise only where needed.
  const csv = { delimiter, lineEnd: eol, quoteAll: Boolean(rows.header && isFullyQuoted(rows.header.raw, delimiter)) };
  const fields = (values: readonly string[]) => csvText([values], csv);
  // The source's rows go back in the encoding they came in, so its own columns are byte for byte what they were.
  const write = async (text: string | Buffer) => {
    const bytes = typeof text === "string" ? encodeText(text, settings.encoding) : text;
    if (!input.out.write(bytes)) await once(input.out, "drain", { signal: input.signal });
  };
  try {
    await write(byteOrderMark(settings.encoding));
    await write(
      rows.header
        ? rows.header.raw + delimiter + fields(addedColumns)
        : fields([...defaultHeader(rows.columnCount, settings.delimiter === undefined), ...addedColumns]),
    );
    for await (const batch of rows.batches()) {
      input.signal?.throwIfAborted();
      let text = "";
      for (const record of batch) {
        const outcome = classifier.classify(record.fields[settings.column.index] ?? "", record.line);
        const found = outcome.identifier === undefined ? undefined : input.results.byIdentifier.get(outcome.identifier);
        const status: JoinStatus = outcome.class === "kept" ? (found ? "checked" : "no_result") : outcome.class;
        const values = outcome.class === "kept" || outcome.class === "duplicate" ? (found ?? empty) : empty;
        const identifier = outcome.class === "kept" || outcome.class === "duplicate" ? outcome.identifier! : "";
        const tail = [identifier, ...values, status];
        // A plain list's line is a value to quote; a CSV record's text is written back unchanged.
        text +=
          settings.delimiter === undefined
            ? fields([record.raw, ...tail])
            : record.raw + delimiter.repeat(Math.max(0, width - record.fields.length)) + delimiter + fields(tail);
        summary.rows++;
        summary.byStatus[status]++;
      }
      await write(text);
    }
  } finally {
    await rows.close();
  }
  return summary;
}

/**
 * The added columns' names. When any source column already has one of them
 * (compared as people read them: case and surrounding spaces ignored), every
 * added column gets the `bc_` prefix: one rule a script can rely on, rather
 * than renaming only the columns that clash.
 */
export function addedColumnNames(sourceHeader: readonly string[], resultColumns: readonly string[]): { names: string[]; prefix: string } {
  const added = ["identifier", ...resultColumns, JOIN_STATUS_COLUMN];
  const taken = new Set(sourceHeader.map((name) => name.trim().toLowerCase()));
  const prefix = added.some((name) => taken.has(name)) ? RESULT_COLUMN_PREFIX : "";
  return { names: added.map((name) => prefix + name), prefix };
}

function defaultHeader(columns: number, plainList: boolean): string[] {
  return plainList ? ["phone"] : Array.from({ length: columns }, (_, i) => `column_${i + 1}`);
}

function isFullyQuoted(raw: string, delimiter: string): boolean {
  return raw.startsWith('"') && raw.endsWith('"') && raw.split(`"${delimiter}"`).length > 1;
}

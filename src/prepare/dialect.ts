import { compactNumber, isScientific, precleanCell } from "./preclean.js";
import { RecordReader, type SourceRecord } from "../csv/record-reader.js";
import { headerScore } from "./header-names.js";

/** The delimiters a list may use, in order of preference when two fit equally well. */
const DELIMITERS = [",", ";", "\t", "|"] as const;
const SNIFF_CHARS = 64 * 1024;
const SNIFF_RECORDS = 100;
/** Data records read ahead to choose the phone column by content. */
export const SAMPLE_ROWS = 200;

/**
 * Finds the field delimiter from the start of the file: the candidate that splits
 * most records into the same number (≥ 2) of fields, quote-aware. A `.tsv` file
 * falls back to tab and a `.csv` to comma (a one-column CSV); anything else with
 * no consistent delimiter is a plain list, one value per line (undefined).
 */
export function sniffDelimiter(sample: string, complete: boolean, extension: string): string | undefined {
  const text = sample.length > SNIFF_CHARS ? sample.slice(0, SNIFF_CHARS) : sample;
  const final = complete && text.length === sample.length;
  let best: { delimiter: string; consistency: number; fields: number } | undefined;
  const candidates = extension === "tsv" ? ["\t", ...DELIMITERS.filter((d) => d !== "\t")] : DELIMITERS;
  for (const delimiter of candidates) {
    const fit = measure(text, final, delimiter);
    if (fit === undefined) continue;
    if (!best || fit.consistency > best.consistency || (fit.consistency === best.consistency && fit.fields > best.fields)) {
      best = { delimiter, ...fit };
    }
  }
  if (best) return best.delimiter;
  if (extension === "tsv") return "\t";
  if (extension === "csv") return ",";
  return undefined;
}

/** How consistently `delimiter` splits the sample: share of records with the most common field count. */
function measure(text: string, final: boolean, delimiter: string): { consistency: number; fields: number } | undefined {
  let records: SourceRecord[];
  try {
    const reader = new RecordReader(delimiter);
    records = reader.push(text);
    if (final) records.push(...reader.end());
  } catch {
    return undefined; // quotes that do not balance with this delimiter: not the file's delimiter
  }
  const counts = new Map<number, number>();
  let total = 0;
  for (const record of records.slice(0, SNIFF_RECORDS)) {
    if (record.raw === "") continue;
    counts.set(record.fields.length, (counts.get(record.fields.length) ?? 0) + 1);
    total++;
  }
  let fields = 0;
  let most = 0;
  for (const [count, seen] of counts) {
    if (seen > most || (seen === most && count > fields)) [fields, most] = [count, seen];
  }
  if (fields < 2) return undefined;
  const consistency = most / total;
  return consistency >= 0.5 ? { consistency, fields } : undefined;
}

/** The first line end of the text, for writing rows back in the file's own style. */
export function sniffLineEnding(sample: string): "\r\n" | "\n" | "\r" {
  const match = /\r\n|\n|\r/.exec(sample);
  return (match?.[0] as "\r\n" | "\n" | "\r" | undefined) ?? "\n";
}

/** A cell that looks like a phone number (or one a spreadsheet mangled), valid or not. */
export function looksLikePhone(cell: string): boolean {
  const { text } = precleanCell(cell);
  return /^\+?\d{6,}$/.test(compactNumber(text)) || isScientific(text);
}

/**
 * Whether the first record is a header. It is when none of its cells looks like
 * a phone number and either one of them is a phone column's name, or (CSV only)
 * every cell is text and the column that holds numbers further down is filled.
 * A plain list needs the name: a stray word on line 1 stays a row to account for.
 */
export function detectHeader(records: readonly SourceRecord[], kind: "txt" | "csv"): boolean {
  const first = records[0]?.fields;
  if (!first || first.some(looksLikePhone)) return false;
  if (first.some((name) => headerScore(name) > 0)) return true;
  if (kind === "txt") return false;
  if (!first.every((cell) => cell.trim() === "" || /\p{L}/u.test(cell))) return false;
  const phoneCounts = new Array<number>(first.length).fill(0);
  for (const record of records.slice(1, SNIFF_RECORDS)) {
    record.fields.forEach((cell, i) => {
      if (i < phoneCounts.length && looksLikePhone(cell)) phoneCounts[i]!++;
    });
  }
  const phoneColumn = phoneCounts.indexOf(Math.max(...phoneCounts));
  return phoneCounts[phoneColumn]! > 0 && first[phoneColumn]!.trim() !== "";
}

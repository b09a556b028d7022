import { stringify } from "csv-stringify/sync";

/**
 * CSV is written here and nowhere else. Both writers quote the RFC 4180 way: a field
 * is quoted when it holds the delimiter, a quote or a line break, and inner quotes are
 * doubled.
 *
 * Both also neutralise formulas, as OWASP's CSV-injection guidance says: a cell that a
 * spreadsheet would run as a formula (see isFormulaStart) gets a `'` in front, which
 * Excel, LibreOffice and Google Sheets show as text. Every writer says which of its
 * cells are written verbatim instead: the user's own cells (a source's columns, a
 * rejected value) come back as they were, unless --safe-csv; what the service sent
 * is never a formula, and neither is anything bulkcheck writes itself.
 */

/**
 * Which cells are written as they are even when they look like a formula: every cell
 * (`true`), none (`false`), or the columns (0-based) for which this returns true.
 */
export type VerbatimCells = boolean | ((column: number) => boolean);

export interface CsvTextOptions {
  /** Default ",". */
  delimiter?: string;
  /** Ends every record, the last one included. Default "\n". */
  lineEnd?: string;
  /** Quote every field, empty ones included (to match a source that quotes everything). */
  quoteAll?: boolean;
  /** Required: whose cells these are (see VerbatimCells). */
  verbatim: VerbatimCells;
}

/**
 * Whether a cell starting with this UTF-16 code unit is read as a formula (or as the
 * start of one) by a spreadsheet: `=`, `+`, `-`, `@`, tab, carriage return and line
 * feed (OWASP's list), and the full-width `＝ ＋ － ＠`, which Apple Numbers folds into
 * them (csv-stringify's `escape_formulas` list).
 */
export function isFormulaStart(code: number): boolean {
  switch (code) {
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x40: // @
    case 0x09: // tab
    case 0x0d: // carriage return
    case 0x0a: // line feed
    case 0xff1d:
    case 0xff0b:
    case 0xff0d:
    case 0xff20:
      return true;
    default:
      return false;
  }
}

/**
 * The formula starts that can open a field of unquoted comma-separated lines, after the
 * comma or line feed before it (a line feed or carriage return there ends the line).
 */
const FORMULA_AFTER_FIELD_START = /[,\n][=+\-@\t\uff1d\uff0b\uff0d\uff20]/;

/**
 * Whether some field of `text`, whole lines of unquoted CSV (see plainLines), may start a
 * formula: one native scan, so the download's fast case looks at each field only where
 * this says one may.
 */
export function plainLinesMayHoldFormula(text: string): boolean {
  return (text.length > 0 && isFormulaStart(text.charCodeAt(0))) || FORMULA_AFTER_FIELD_START.test(text);
}

/** `value` as a spreadsheet shows it as text: with a `'` in front when it would start a formula. */
export function neutraliseFormula(value: string): string {
  return value.length > 0 && isFormulaStart(value.charCodeAt(0)) ? `'${value}` : value;
}

function verbatimColumn(verbatim: VerbatimCells): (column: number) => boolean {
  return typeof verbatim === "function" ? verbatim : () => verbatim;
}

/** Records as CSV text, by csv-stringify. */
export function csvText(records: ReadonlyArray<ReadonlyArray<string | number>>, options: CsvTextOptions): string {
  const verbatim = verbatimColumn(options.verbatim);
  return stringify(records as Array<Array<string | number>>, {
    delimiter: options.delimiter ?? ",",
    record_delimiter: options.lineEnd ?? "\n",
    ...(options.quoteAll ? { quoted: true, quoted_empty: true } : {}),
    // Given a record_delimiter, csv-stringify 6.9 quotes a field with that delimiter but not a lone CR or LF.
    quoted_match: /[\r\n]/,
    cast: { string: (value, context) => (verbatim(context.index) ? value : neutraliseFormula(value)) },
  });
}

/**
 * A source record as a join writes it back: its own text, byte for byte; or with
 * `neutralise` (--safe-csv), when one of its fields would start a formula, its fields
 * written again with those neutralised, quoted as `options` says. No line end.
 */
export function sourceRecordText(
  record: { raw: string; fields: readonly string[] },
  neutralise: boolean,
  options: Pick<CsvTextOptions, "delimiter" | "quoteAll">,
): string {
  if (!neutralise || record.fields.every((field) => neutraliseFormula(field) === field)) return record.raw;
  return csvText([record.fields], { ...options, lineEnd: "", verbatim: false });
}

/** The delimiters of the download's CSV and TSV output. */
export type OutputDelimiter = "," | "\t";

const NEEDS_QUOTES: Readonly<Record<OutputDelimiter, RegExp>> = { ",": /[",\r\n]/, "\t": /["\t\r\n]/ };

/**
 * One line of CSV or TSV with a "\n" end, quoted and neutralised as csvText does it.
 * The download's hot path writes every row it parsed through this instead of
 * csv-stringify, whose per-call set-up was a fifth of the time of a million-row
 * download; tests compare the two.
 */
export function delimitedLine(row: readonly string[], delimiter: OutputDelimiter, verbatim: VerbatimCells): string {
  const special = NEEDS_QUOTES[delimiter];
  const keep = verbatimColumn(verbatim);
  const field = (value: string, column: number): string => {
    const text = keep(column) ? value : neutraliseFormula(value);
    return special.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return `${row.map(field).join(delimiter)}\n`;
}

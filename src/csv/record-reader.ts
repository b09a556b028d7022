import { endlessRecord, swallowedRows, unclosedQuote } from "./errors.js";

/** One record of the source: a CSV row, or a line of a plain list. */
export interface SourceRecord {
  /** 1-based physical line where the record starts (a header row counts as a line). */
  line: number;
  fields: string[];
  /** The record's original text without its line end, for writing it back unchanged. */
  raw: string;
}

/** One column of consecutive records: what preparation needs, without a full record's allocations. */
export interface CellBatch {
  lines: number[];
  /** The column's field of each record; "" when the record is shorter. */
  cells: string[];
  /** When asked for: a second column's field of each record (the source's id, for the rejects file). */
  ids?: string[];
}

/** Complete records as one piece of the source text, for a reader elsewhere (a worker) to parse. */
export interface TextBlock {
  text: string;
  /** The line the block's first record starts on. */
  firstLine: number;
}

/**
 * Where a reader puts what it finds: whole records, one column of them, or nothing (when
 * only where the records end is wanted: a column no record has, and no batch).
 */
type CellSink = { whole: false; column: number; idColumn: number; batch?: CellBatch };
type Sink = { whole: true; column: -1; idColumn: -1; records: SourceRecord[] } | CellSink;
const NO_FIELDS: string[] = [];
const NO_COLUMN = -2;

const QUOTE = 34;
const LF = 10;
const CR = 13;
/** No real row is this long; a record that grows past it is an unclosed quote swallowing the file. */
const MAX_RECORD_CHARS = 1 << 20;

/**
 * Splits decoded text into records, chunk by chunk, keeping only the incomplete
 * last record between chunks (memory stays flat however long the file is).
 *
 * With a delimiter it reads RFC 4180 CSV: a field starting with `"` is quoted,
 * `""` inside it is a quote, line ends inside it belong to the field; a quote
 * anywhere else is an ordinary character. Text after a closing quote is kept as
 * Excel does, except when the quoted field spanned lines: that is an unbalanced
 * quote that swallowed rows, and the file is rejected naming the line it opened
 * on. Without a delimiter every line is one value. CRLF, LF and CR all end lines.
 * Unreadable text throws CsvSyntaxError, naming the line to look at.
 *
 * Measured on a 500k-row, 20 MB export: ~0.5 s for whole records, ~0.2 s for
 * one column, ~0.12 s to find block boundaries, against ~2.2 s for csv-parse
 * in array mode.
 */
export class RecordReader {
  private pending = "";
  private line: number;
  private readonly delimiter: number | undefined;

  /** `firstLine` is the line the text starts on (a block cut from the middle of a file). */
  constructor(delimiter: string | undefined, firstLine = 1) {
    this.delimiter = delimiter === undefined ? undefined : delimiter.charCodeAt(0);
    this.line = firstLine;
  }

  /** The records completed by this chunk. */
  push(chunk: string): SourceRecord[] {
    const sink: Sink = { whole: true, column: -1, idColumn: -1, records: [] };
    this.read(this.pending + chunk, false, sink);
    return sink.records;
  }

  /** The last record, if the text did not end with a line end. */
  end(): SourceRecord[] {
    const sink: Sink = { whole: true, column: -1, idColumn: -1, records: [] };
    this.read(this.pending, true, sink);
    return sink.records;
  }

  /** Like push, keeping only one column (0-based) of each record, and `idColumn`'s too when it is one (≥ 0). */
  pushCells(chunk: string, column: number, idColumn = -1): CellBatch {
    const batch = cellBatch(idColumn);
    this.read(this.pending + chunk, false, { whole: false, column, idColumn, batch });
    return batch;
  }

  /** Like end, keeping only one column (and `idColumn`'s). */
  endCells(column: number, idColumn = -1): CellBatch {
    const batch = cellBatch(idColumn);
    this.read(this.pending, true, { whole: false, column, idColumn, batch });
    return batch;
  }

  /**
   * Like push, returning the complete records' text instead of parsing them
   * into fields; a reader started on `firstLine` reads exactly the same records from it.
   */
  pushBlock(chunk: string): TextBlock {
    return this.block(this.pending + chunk, false);
  }

  /** Like end, as a block. */
  endBlock(): TextBlock {
    return this.block(this.pending, true);
  }

  /**
   * The complete records of `text` are found by reading them, keeping no field: the same
   * rules and errors as every other read. A boundary scanner of its own (~5× faster than
   * parsing, but re-stating the CSV rules) bought nothing measurable and was removed
   * (issue 20; CPU user+sys, two alternating runs each, 2 vCPU at load 10–11):
   * `bulkcheck validate` of bench/gen-messy-csv.js's 500,000 rows 2.81 and 2.07 s with it,
   * 2.49 and 2.38 s without; `download --join` of a 200,000-row CSV 6.01 and 4.86 s
   * against 5.61 and 5.83 s.
   */
  private block(text: string, final: boolean): TextBlock {
    const firstLine = this.line;
    const consumed = this.consume(text, final, { whole: false, column: NO_COLUMN, idColumn: NO_COLUMN });
    this.keepPending(text.slice(consumed));
    return { text: text.slice(0, consumed), firstLine };
  }

  /** True when no record waits for more text: everything pushed so far ended at a record's end. */
  get atRecordStart(): boolean {
    return this.pending === "";
  }

  /** Counts `lines` whole lines that the caller read itself (at a record start), so later errors name the right line. */
  skipLines(lines: number): void {
    this.line += lines;
  }

  /** The line reached after everything pushed so far and then `text` (to name where bad input starts). */
  lineAfter(text: string): number {
    return this.line + countLineBreaks(this.pending) + countLineBreaks(text);
  }

  private read(text: string, final: boolean, sink: Sink): void {
    this.keepPending(text.slice(this.consume(text, final, sink)));
  }

  /** Reads the complete records of `text` into `sink`; returns how much of it they take. */
  private consume(text: string, final: boolean, sink: Sink): number {
    return this.delimiter === undefined ? this.readLines(text, final, sink) : this.readCsv(text, final, sink);
  }

  private keepPending(rest: string): void {
    this.pending = rest;
    if (rest.length > MAX_RECORD_CHARS) throw endlessRecord(this.line, this.delimiter !== undefined && rest.includes('"'));
  }

  /** Plain list: one value per line. Returns how much of `text` was consumed. */
  private readLines(text: string, final: boolean, sink: Sink): number {
    let pos = 0;
    const length = text.length;
    const ends = new FieldEnds(text, undefined);
    while (pos < length) {
      const end = ends.after(pos);
      if (end === length && !final) break;
      if (text.charCodeAt(end) === CR && end + 1 === length && !final) break;
      if (sink.whole) {
        const value = text.slice(pos, end);
        sink.records.push({ line: this.line, fields: [value], raw: value });
      } else if (sink.batch) {
        sink.batch.lines.push(this.line);
        sink.batch.cells.push(sink.column === 0 ? text.slice(pos, end) : "");
        sink.batch.ids?.push(sink.idColumn === 0 ? text.slice(pos, end) : "");
      }
      this.line++;
      pos = lineEndAfter(text, end);
    }
    return pos;
  }

  /**
   * CSV. Returns how much of `text` was consumed (up to the end of the last
   * complete record). With a one-column sink, other fields are skipped, not sliced.
   */
  private readCsv(text: string, final: boolean, sink: Sink): number {
    const delimiter = this.delimiter!;
    const ends = new FieldEnds(text, String.fromCharCode(delimiter));
    const wanted = sink.column;
    const wantedId = sink.idColumn;
    const length = text.length;
    let pos = 0;
    let consumed = 0;
    records: while (pos < length) {
      const start = pos;
      let line = this.line;
      const fields: string[] = sink.whole ? [] : NO_FIELDS;
      let cell = "";
      let id = "";
      for (let index = 0; ; index++) {
        const keep = wanted === -1 || wanted === index || wantedId === index;
        let value = "";
        if (text.charCodeAt(pos) === QUOTE) {
          const openedOn = line;
          let from = pos + 1;
          for (;;) {
            const close = text.indexOf('"', from);
            if (close < 0 || (close + 1 === length && !final)) {
              if (close < 0 && final) throw unclosedQuote(openedOn);
              break records;
            }
            line += countLineBreaks(text, from, close);
            const escaped = text.charCodeAt(close + 1) === QUOTE;
            if (keep) value += text.slice(from, escaped ? close + 1 : close);
            if (escaped) {
              from = close + 2;
              continue;
            }
            pos = close + 1;
            break;
          }
          const tailEnd = ends.after(pos);
          if (tailEnd > pos) {
            const tail = text.slice(pos, tailEnd);
            if (line > openedOn && tail.trim() !== "") throw swallowedRows(openedOn, line);
            value += tail;
            pos = tailEnd;
          }
        } else {
          const end = ends.after(pos);
          if (keep) value = text.slice(pos, end);
          pos = end;
        }
        if (wanted === -1) fields.push(value);
        else if (wanted === index) cell = value;
        if (wantedId === index) id = value;
        if (pos >= length && !final) break records;
        const c = text.charCodeAt(pos);
        if (pos < length && c === delimiter) {
          pos++;
          continue;
        }
        if (c === CR && pos + 1 === length && !final) break records;
        if (sink.whole) sink.records.push({ line: this.line, fields, raw: text.slice(start, pos) });
        else if (sink.batch) {
          sink.batch.lines.push(this.line);
          sink.batch.cells.push(cell);
          sink.batch.ids?.push(id);
        }
        this.line = line + 1;
        pos = pos < length ? lineEndAfter(text, pos) : length;
        consumed = pos;
        break;
      }
    }
    return consumed;
  }
}

function cellBatch(idColumn: number): CellBatch {
  return idColumn >= 0 ? { lines: [], cells: [], ids: [] } : { lines: [], cells: [] };
}

/** Line ends in text[from, to): CRLF, LF and CR each end one line. */
export function countLineBreaks(text: string, from = 0, to = text.length): number {
  let count = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === LF) count++;
    else if (c === CR) {
      count++;
      if (i + 1 < to && text.charCodeAt(i + 1) === LF) i++;
    }
  }
  return count;
}

/** The position after the line end at `pos` (CRLF is one line end). */
export function lineEndAfter(text: string, pos: number): number {
  return text.charCodeAt(pos) === CR && text.charCodeAt(pos + 1) === LF ? pos + 2 : pos + 1;
}

/**
 * Where an unquoted field (or the text after a closing quote) ends: at the next
 * delimiter, line end, or the end of the text. The next position of each is
 * found with indexOf and remembered until passed, which runs at memchr speed
 * instead of a character loop (2× faster over a whole export).
 */
class FieldEnds {
  private delimiterAt = -1;
  private lfAt = -1;
  private crAt = -1;

  constructor(
    private readonly text: string,
    private readonly delimiter: string | undefined,
  ) {
    if (delimiter === undefined) this.delimiterAt = text.length;
  }

  after(pos: number): number {
    if (this.delimiterAt < pos) this.delimiterAt = this.find(this.delimiter!, pos);
    if (this.lfAt < pos) this.lfAt = this.find("\n", pos);
    if (this.crAt < pos) this.crAt = this.find("\r", pos);
    return Math.min(this.delimiterAt, this.lfAt, this.crAt);
  }

  private find(char: string, pos: number): number {
    const at = this.text.indexOf(char, pos);
    return at < 0 ? this.text.length : at;
  }
}

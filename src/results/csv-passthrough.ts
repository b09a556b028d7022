import { parseCsvText, type LineEnd } from "./csv-records.js";
import { RecordEnd, splitQuotedLine } from "./csv-quoting.js";
import { delimitedLine } from "./format-delimited.js";
import { RecentTails } from "./line-tails.js";
import type { SourceRows } from "./source-rows.js";

/** Where `char` next occurs in `text` at or after `from`; text.length when it does not. */
function nextIndex(text: string, char: string, from: number): number {
  const at = text.indexOf(char, from);
  return at < 0 ? text.length : at;
}

/**
 * The fast path's scanner: turns the text of a result CSV whose fields already are the
 * output's columns, in order, into exactly the output the general path (csv-parse,
 * then `delimitedLine`) would write, without parsing most of it:
 *
 * - A plain line (no quote, no carriage return but its CRLF's) is copied through: a
 *   run of them is one slice of the input. It is only counted and its tallied span
 *   noted (a recent line tail is recognised without walking its commas); a short one
 *   gets the empty fields the general path would add.
 * - A line whose quoting is well formed is split here and re-rendered.
 * - Anything else (a quoted field running over lines, a stray carriage return, a
 *   quote csv-parse reads leniently) is collected up to its record's end and handed
 *   to csv-parse, with the record delimiter pinned to the file's.
 *
 * Empty lines are skipped, as csv-parse skips them. Memory holds one piece of text
 * and at most one record being collected.
 */
export class CsvPassthrough {
  readonly #crlf: boolean;
  readonly #recordEnd: RecordEnd;
  /** The fields a plain line's tallied span runs over, first to last; none without a tally. */
  readonly #spanFrom: number;
  readonly #spanTo: number;
  readonly #tails = new RecentTails();
  /** A record being collected for csv-parse; undefined when none is. */
  #record: string | undefined;
  // State of one call: its text, the output so far, the start of the run of lines
  // copied as they are, and the next comma, quote and carriage return at or after the
  // line being read (found lazily, so each character is searched once).
  #text = "";
  #out = "";
  #runStart = 0;
  #comma = -1;
  #quote = -1;
  #cr = -1;

  constructor(
    private readonly lineEnd: LineEnd,
    private readonly rows: SourceRows,
  ) {
    this.#crlf = lineEnd === "\r\n";
    this.#recordEnd = new RecordEnd(this.#crlf);
    [this.#spanFrom, this.#spanTo] = rows.spans ? [rows.spans.from, rows.spans.to] : [-1, -1];
  }

  /**
   * Output for `text`, whole lines each ending in a line feed. The caller cuts the input
   * at line feeds (keeping what follows the last for the next call), so `text` is a
   * fresh flat string: string searches on a concatenation took V8's slow paths.
   */
  lines(text: string): string {
    this.#begin(text);
    let start = 0;
    for (let lf = text.indexOf("\n"); lf >= 0; lf = text.indexOf("\n", start)) {
      this.#line(start, lf, lf + 1);
      start = lf + 1;
    }
    return this.#finish(start);
  }

  /** Output for the end of the input: `text` is what followed the last line feed, perhaps nothing. */
  end(text: string): string {
    this.#begin(text);
    if (text.length > 0) this.#line(0, text.length, text.length);
    if (this.#record !== undefined) this.#parseRecord();
    this.rows.finish();
    return this.#finish(text.length);
  }

  #begin(text: string): void {
    [this.#text, this.#out, this.#runStart] = [text, "", 0];
    [this.#comma, this.#quote, this.#cr] = [-1, -1, -1];
    this.#tails.begin(text);
  }

  #finish(end: number): string {
    const out = this.#out + this.#text.slice(this.#runStart, end);
    [this.#text, this.#out] = ["", ""];
    return out;
  }

  /** Ends the run of copied lines before `start` and writes `text` in place of the input up to `next`. */
  #replace(start: number, next: number, text: string): void {
    this.#out += this.#text.slice(this.#runStart, start) + text;
    this.#runStart = next;
  }

  /** The line `[start, lf)`; `next` is past its line feed, or equals `lf` for an unterminated last line. */
  #line(start: number, lf: number, next: number): void {
    if (this.#record !== undefined) {
      this.#collect(start, next);
      return;
    }
    const text = this.#text;
    if (this.#cr < start) this.#cr = nextIndex(text, "\r", start);
    const ownCr = this.#crlf && next > lf;
    const end = ownCr ? lf - 1 : lf;
    if (ownCr ? this.#cr !== end : this.#cr < lf) {
      this.#startRecord(start, next);
      return;
    }
    if (end === start) {
      this.#replace(start, next, "");
      return;
    }
    if (this.#quote < start) this.#quote = nextIndex(text, '"', start);
    if (this.#quote >= end) {
      const missing = this.rows.shape.width - this.#plainLine(start, end, next);
      if (missing > 0 || end !== next - 1) this.#replace(start, next, `${text.slice(start, end)}${",".repeat(missing)}\n`);
      return;
    }
    const fields = splitQuotedLine(text, start, end);
    if (fields) this.#replace(start, next, delimitedLine(this.rows.accept(fields), ","));
    else this.#startRecord(start, next);
  }

  /**
   * Counts the fields of the quote-free line `[start, end)` (`next` is past its line
   * end) and passes it, with its tallied span, to the rows. A recent tail (the text after
   * the first comma) is recognised whole instead of walked comma by comma.
   */
  #plainLine(start: number, end: number, next: number): number {
    const text = this.#text;
    if (this.#comma < start) this.#comma = nextIndex(text, ",", start);
    const tail = this.#comma + 1;
    const terminated = tail <= end && next > end;
    const known = terminated ? this.#tails.find(tail) : undefined;
    if (known) {
      known.entry = this.rows.acceptSpan(known.fields, text, tail + known.spanStart, tail + known.spanEnd, known.entry);
      return known.fields;
    }
    let fields = 1;
    let [spanStart, spanEnd] = [this.#spanFrom === 0 ? start : end, end];
    while (this.#comma < end) {
      if (fields === this.#spanFrom) spanStart = this.#comma + 1;
      else if (fields === this.#spanTo + 1) spanEnd = this.#comma;
      fields += 1;
      this.#comma = nextIndex(text, ",", this.#comma + 1);
    }
    const entry = this.rows.acceptSpan(fields, text, spanStart, spanEnd);
    if (terminated && spanStart >= tail) this.#tails.remember(tail, next, { fields, spanStart: spanStart - tail, spanEnd: spanEnd - tail, entry });
    return fields;
  }

  #startRecord(start: number, next: number): void {
    this.#replace(start, start, "");
    this.#record = "";
    this.#collect(start, next);
  }

  #collect(start: number, next: number): void {
    this.#record += this.#text.slice(start, next);
    this.#runStart = next;
    if (this.#recordEnd.feed(this.#text, start, next)) this.#parseRecord();
  }

  #parseRecord(): void {
    for (const record of parseCsvText(this.#record ?? "", this.lineEnd, this.rows.label)) {
      this.#out += delimitedLine(this.rows.accept(record), ",");
    }
    this.#record = undefined;
  }
}

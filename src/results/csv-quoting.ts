/**
 * Two narrow readers of CSV quoting for the fast path, each written to agree exactly
 * with csv-parse as result files are read (relax_quotes, `"` as quote and escape):
 *
 * - A quote opens a quoted field only as the field's first character; elsewhere in
 *   an unquoted field it is an ordinary character.
 * - Inside a quoted field, `""` is one quote, and any other quote ends the quoting.
 *   Followed by a delimiter or the line end that is a normal closing quote; followed
 *   by anything else csv-parse keeps the text, quote included (left to csv-parse).
 *
 * Anything these readers are not sure of goes to csv-parse itself; the differential
 * tests feed both paths random text to keep the agreement honest.
 */

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/**
 * The fields of the line `text[start, end)` (no line end, no carriage return in it)
 * when every quoted field in it is well formed: opened as the field's first character,
 * closed on the same line, and followed by a comma or the line end. Undefined for
 * anything else, such as a field whose quoting runs onto the next line.
 */
export function splitQuotedLine(text: string, start: number, end: number): string[] | undefined {
  const fields: string[] = [];
  for (let at = start; ; ) {
    let value = "";
    if (text.charCodeAt(at) === QUOTE) {
      let from = at + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote < 0 || quote >= end) return undefined;
        if (text.charCodeAt(quote + 1) !== QUOTE) {
          value += text.slice(from, quote);
          at = quote + 1;
          break;
        }
        value += text.slice(from, quote + 1);
        from = quote + 2;
      }
      if (at < end && text.charCodeAt(at) !== COMMA) return undefined;
    } else {
      const comma = text.indexOf(",", at);
      const fieldEnd = comma < 0 || comma >= end ? end : comma;
      value = text.slice(at, fieldEnd);
      at = fieldEnd;
    }
    fields.push(value);
    if (at >= end) return fields;
    at += 1;
  }
}

/**
 * Follows csv-parse's quoting state across lines to find where a record ends, for a
 * record the fast path hands to csv-parse whole: one whose quoted field spans lines,
 * or that holds a stray carriage return or a quote csv-parse reads leniently.
 */
export class RecordEnd {
  #quoting = false;
  #fieldStarted = false;

  constructor(private readonly crlf: boolean) {}

  /**
   * Feeds `text[start, end)`, a record's next whole line(s) or its last, unterminated
   * piece. True when the text fed so far ends exactly at a record delimiter outside
   * quotes, that is, at the end of a record; the state is then ready for the next one.
   */
  feed(text: string, start: number, end: number): boolean {
    let atRecordEnd = false;
    for (let i = start; i < end; i += 1) {
      const c = text.charCodeAt(i);
      atRecordEnd = false;
      if (this.#quoting) {
        if (c !== QUOTE) continue;
        if (text.charCodeAt(i + 1) === QUOTE) i += 1;
        else [this.#quoting, this.#fieldStarted] = [false, true];
      } else if (c === QUOTE) {
        if (!this.#fieldStarted) this.#quoting = true;
      } else if (c === COMMA) {
        this.#fieldStarted = false;
      } else if (this.crlf ? c === CR && text.charCodeAt(i + 1) === LF : c === LF) {
        if (this.crlf) i += 1;
        [this.#fieldStarted, atRecordEnd] = [false, true];
      } else {
        this.#fieldStarted = true;
      }
    }
    return atRecordEnd;
  }
}

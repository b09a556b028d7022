import { swallowedRows, unclosedQuote } from "./errors.js";

const QUOTE = 34;
const LF = 10;
const CR = 13;

export interface RecordsEnd {
  /** Where the last complete record of the text ends (after its line end). */
  consumed: number;
  /** The line the next record starts on. */
  line: number;
}

/**
 * Where the complete records of `text` end, without reading their fields: the
 * cut that lets another thread parse a block (RecordReader.pushBlock).
 *
 * The same rules as RecordReader, jumping from quote to line end with indexOf
 * instead of visiting every field: a quote opens a quoted field only at the
 * start of a field, `""` inside one is a quote, line ends inside one do not end
 * the record, and the same unbalanced-quote errors are thrown at the same
 * lines. ~5× faster than parsing. test/csv/record-boundaries.test.ts checks
 * it against the parser on generated text cut at random places.
 */
export function findRecordsEnd(text: string, final: boolean, delimiter: number | undefined, firstLine: number): RecordsEnd {
  const length = text.length;
  let line = firstLine;
  let recordStart = 0;
  let result: RecordsEnd = { consumed: 0, line };
  let pos = 0;
  let quoteAt = delimiter === undefined ? length : -1;
  let lfAt = -1;
  let crAt = -1;
  const next = (char: string, from: number) => {
    const at = text.indexOf(char, from);
    return at < 0 ? length : at;
  };
  for (;;) {
    if (quoteAt < pos) quoteAt = next('"', pos);
    if (lfAt < pos) lfAt = next("\n", pos);
    if (crAt < pos) crAt = next("\r", pos);
    const endAt = Math.min(lfAt, crAt);
    if (quoteAt < endAt) {
      if (quoteAt !== recordStart && text.charCodeAt(quoteAt - 1) !== delimiter) {
        pos = quoteAt + 1; // a quote inside an unquoted field is an ordinary character
        continue;
      }
      const openedOn = line;
      let from = quoteAt + 1;
      let close: number;
      for (;;) {
        close = text.indexOf('"', from);
        if (close < 0 || (close + 1 === length && !final)) {
          if (close < 0 && final) throw unclosedQuote(openedOn);
          return result;
        }
        line += countLineBreaks(text, from, close);
        if (text.charCodeAt(close + 1) !== QUOTE) break;
        from = close + 2;
      }
      pos = close + 1;
      if (line > openedOn) {
        let tailEnd = pos;
        while (tailEnd < length && !isFieldEnd(text.charCodeAt(tailEnd), delimiter!)) tailEnd++;
        if (text.slice(pos, tailEnd).trim() !== "") throw swallowedRows(openedOn, line);
      }
      continue;
    }
    if (endAt === length) {
      if (final && recordStart < length) result = { consumed: length, line: line + 1 };
      return result;
    }
    if (text.charCodeAt(endAt) === CR && endAt + 1 === length && !final) return result;
    pos = lineEndAfter(text, endAt);
    line++;
    recordStart = pos;
    result = { consumed: pos, line };
  }
}

function isFieldEnd(c: number, delimiter: number): boolean {
  return c === delimiter || c === LF || c === CR;
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

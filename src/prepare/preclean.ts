/**
 * Cell text → what a phone number parser can read. Spreadsheet and CRM exports
 * wrap numbers in quotes, apostrophes (Excel's "keep as text"), `tel:` links and
 * a float's `.0`, and append extensions; none of that is part of the number.
 *
 * Every step is linear in the cell's length (a loop, or a pattern anchored at one
 * end whose repeated parts cannot overlap): a hostile cell must not stall a run.
 * `/\s+$/`, for one, is quadratic on "a" + 80,000 spaces + "b".
 */

/** No phone number, however written, is longer; a longer cell is not cleaned at all (see classifyCell). */
export const MAX_CELL_CHARS = 100;

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const ARABIC_INDIC_DIGIT = /[\u0660-\u0669\u06f0-\u06f9]/g;
/** A cell wrapped in one pair of straight or typographic quotes (anchored at both ends: one pass per alternative). */
const SURROUNDING_QUOTES = /^(?:"(.*)"|'(.*)'|“(.*)[”“]|‘(.*)[’‘]|„(.*)[“”]|«(.*)»)$/s;
const TEL_URI = /^tel:/i;
const EXCEL_SCIENTIFIC = /^(\d)(?:\.(\d+))?e\+?(\d{1,2})$/i;
/** `(+44) …` or `(0044) …`: a calling code in brackets before the number. */
const BRACKETED_CODE = /^\(\s*(?:\+|00)\s*(\d{1,3})\s*\)/;
/** The punctuation libphonenumber-js skips inside a number (dashes, slashes, dots, spaces, brackets, tildes). */
const NUMBER_PUNCTUATION = /[\s\-\u2010-\u2015\u2212\u30fc/.()[\]~\u2053\u223c\u00ad\u200b\u2060]/g;
const MAX_EXTENSION_DIGITS = 7;
const EXTENSION_KEYWORDS = ["extension.", "extension", "ext.", "ext", "x", "#"] as const;

export interface PrecleanedCell {
  text: string;
  extension?: string;
}

/**
 * Turns the text of a cell into what a parser can read: NFKC (full-width digits),
 * Arabic-Indic digits folded, edge spaces (incl. no-break and zero-width), one
 * pair of surrounding quotes, a leading apostrophe, `tel:`, a trailing `.0` and
 * an extension (`x123`, `ext. 123`, `#123`, `;ext=123`) removed.
 */
export function precleanCell(raw: string): PrecleanedCell {
  let text = raw;
  // NFKC is the slow step and changes nothing in printable ASCII.
  if (!PRINTABLE_ASCII.test(text)) {
    text = text.normalize("NFKC").replace(ARABIC_INDIC_DIGIT, (d) => String(d.charCodeAt(0) & 0xf));
  }
  text = trimEdges(text);
  const quoted = SURROUNDING_QUOTES.exec(text);
  if (quoted) text = trimEdges(quoted.slice(1).find((inner) => inner !== undefined)!);
  if (text.startsWith("'")) text = text.slice(1);
  if (TEL_URI.test(text)) text = trimEdges(text.slice(4));
  if (text.endsWith(".0")) text = text.slice(0, -2);
  const extension = extensionAtEnd(text);
  if (extension === undefined) return { text };
  return { text: trimEdges(text.slice(0, extension.start)), extension: extension.digits };
}

/** Spaces a cell may carry at its edges: JavaScript's `\s`, plus soft hyphen, zero-width space and word joiner. */
function isEdgeSpace(code: number): boolean {
  if (code === 0x20 || (code >= 0x09 && code <= 0x0d)) return true;
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0xad ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200b) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x2060 ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** The text without the spaces at its edges (isEdgeSpace), found by walking in from each end. */
export function trimEdges(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isEdgeSpace(text.charCodeAt(start))) start++;
  while (end > start && isEdgeSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * An extension written at the end of the number: `[;,] (ext|extension)[.] | x | #`,
 * an optional `:` or `=`, 1–7 digits and an optional `#`, spaces allowed between
 * the parts. Read backwards from the end in one pass; `start` is where it begins.
 * Undefined when there is none, or nothing before it.
 */
function extensionAtEnd(text: string): { start: number; digits: string } | undefined {
  let end = text.length;
  if (text.endsWith("#")) end--;
  let i = end;
  while (i > 0 && isDigit(text.charCodeAt(i - 1))) i--;
  if (i === end || end - i > MAX_EXTENSION_DIGITS) return undefined;
  const digits = text.slice(i, end);
  i = spacesBefore(text, i);
  if (text[i - 1] === ":" || text[i - 1] === "=") i = spacesBefore(text, i - 1);
  const tail = text.slice(Math.max(0, i - 10), i).toLowerCase();
  const keyword = EXTENSION_KEYWORDS.find((word) => tail.endsWith(word));
  if (keyword === undefined) return undefined;
  i = spacesBefore(text, i - keyword.length);
  if (text[i - 1] === ";" || text[i - 1] === ",") i = spacesBefore(text, i - 1);
  return i > 0 ? { start: i, digits } : undefined;
}

/** Where the run of spaces that ends at `i` starts. */
function spacesBefore(text: string, i: number): number {
  while (i > 0 && isEdgeSpace(text.charCodeAt(i - 1))) i--;
  return i;
}

/** True for a cell Excel turned into scientific notation (`4.47911E+11`). */
export function isScientific(text: string): boolean {
  return EXCEL_SCIENTIFIC.test(text);
}

/**
 * Expands `4.47911123456E+11` back to digits when the mantissa holds exactly
 * exponent + 1 digits; returns undefined otherwise (`4.47911E+11` lost digits,
 * and `4.93012345E+9` may have lost a trailing zero: neither can be recovered).
 */
export function expandScientific(text: string): string | undefined {
  const m = EXCEL_SCIENTIFIC.exec(text);
  if (!m) return undefined;
  const digits = m[1]! + (m[2] ?? "");
  return digits.length === Number(m[3]) + 1 ? digits : undefined;
}

/**
 * `(+CC) rest` or `(00CC) rest` as `+CC rest` when `isCallingCode(CC)`, whatever
 * the task country's own international prefix; otherwise the text unchanged.
 */
export function bracketedCode(text: string, isCallingCode: (code: string) => boolean): string {
  const m = BRACKETED_CODE.exec(text);
  return m && isCallingCode(m[1]!) ? "+" + m[1]! + text.slice(m[0].length) : text;
}

/** Drops the punctuation a number may be written with; the rest is `+`, digits, or something that is no number. */
export function compactNumber(text: string): string {
  return text.replace(NUMBER_PUNCTUATION, "");
}

/**
 * Cell text → what a phone number parser can read. Spreadsheet and CRM exports
 * wrap numbers in quotes, apostrophes (Excel's "keep as text"), `tel:` links and
 * a float's `.0`, and append extensions; none of that is part of the number.
 */

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const ARABIC_INDIC_DIGIT = /[\u0660-\u0669\u06f0-\u06f9]/g;
const EDGE_SPACE = /^[\s\u00a0\u00ad\u200b\u2060\ufeff]+|[\s\u00a0\u00ad\u200b\u2060\ufeff]+$/g;
/** A cell wrapped in one pair of straight or typographic quotes. */
const SURROUNDING_QUOTES = /^(?:"(.*)"|'(.*)'|“(.*)[”“]|‘(.*)[’‘]|„(.*)[“”]|«(.*)»)$/s;
const TEL_URI = /^tel:/i;
const EXTENSION = /\s*(?:[;,]\s*)?(?:ext(?:ension)?\.?|x|#)\s*[:=]?\s*(\d{1,7})#?$/i;
const EXCEL_SCIENTIFIC = /^(\d)(?:\.(\d+))?e\+?(\d{1,2})$/i;
/** The punctuation libphonenumber-js skips inside a number (dashes, slashes, dots, spaces, brackets, tildes). */
const NUMBER_PUNCTUATION = /[\s\-\u2010-\u2015\u2212\u30fc/.()[\]~\u2053\u223c\u00ad\u200b\u2060]/g;

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
  text = text.replace(EDGE_SPACE, "");
  const quoted = SURROUNDING_QUOTES.exec(text);
  if (quoted)
    text = quoted
      .slice(1)
      .find((inner) => inner !== undefined)!
      .replace(EDGE_SPACE, "");
  if (text.startsWith("'")) text = text.slice(1);
  if (TEL_URI.test(text)) text = text.slice(4).replace(EDGE_SPACE, "");
  if (text.endsWith(".0")) text = text.slice(0, -2);
  const ext = EXTENSION.exec(text);
  if (ext && ext.index > 0) {
    return { text: text.slice(0, ext.index).replace(EDGE_SPACE, ""), extension: ext[1]! };
  }
  return { text };
}

/** True for a cell Excel turned into scientific notation (`4.47911E+11`). */
export function isScientific(text: string): boolean {
  return EXCEL_SCIENTIFIC.test(text);
}

/**
 * Expands `4.47911123456E+11` back to digits when the mantissa kept every digit;
 * returns undefined when digits were lost (the cell cannot be recovered).
 */
export function expandScientific(text: string): string | undefined {
  const m = EXCEL_SCIENTIFIC.exec(text);
  if (!m) return undefined;
  const digits = m[1]! + (m[2] ?? "");
  // Trailing zeros are indistinguishable from rounding, so only a mantissa holding every digit is trusted.
  return digits.length === Number(m[3]) + 1 ? digits : undefined;
}

/** Drops the punctuation a number may be written with; the rest is `+`, digits, or something that is no number. */
export function compactNumber(text: string): string {
  return text.replace(NUMBER_PUNCTUATION, "");
}

const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV record (RFC 4180 quoting, "\n" line end): fields with a comma, quote or line break are quoted. */
export function csvLine(fields: readonly string[]): string {
  return fields.map((field) => (NEEDS_QUOTES.test(field) ? `"${field.replaceAll('"', '""')}"` : field)).join(",") + "\n";
}

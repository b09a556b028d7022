/**
 * HTTP statuses the sandbox sends beside each envelope code. The spec leaves them
 * unstated; this is the sandbox's documented choice, and clients should rely on
 * the envelope `code`, never on the status alone.
 *
 * | code | HTTP | why |
 * |---|---|---|
 * | 0 | 200 | success |
 * | 40000, 40001, 40002 | 400 | malformed or conflicting request |
 * | 40100 | 401 | missing or invalid X-API-Key |
 * | 40200 | 402 | insufficient balance (Payment Required) |
 * | 42200 | 422 | task not acceptable in its current form (size, line count, file type) |
 * | 42900, 42901 | 429 | quota or request slots exhausted; 42901 carries Retry-After |
 * | 50300, 50303 | 503 | maintenance / at capacity; 50303 carries Retry-After |
 * | 50400 | 504 | request timed out |
 *
 * Outside the table: an unknown path or a well-formed but unknown task id is
 * HTTP 404 with code 40000 (`NOT_FOUND_STATUS`); a malformed task id is 400 with
 * code 40000; a known path with the wrong method is 405 with code 40000 and an
 * `Allow` header; an internal sandbox error is 500 with code 50300.
 * Result downloads are not envelope responses: 403/404 with a small XML body.
 */
export const HTTP_STATUS_BY_CODE: Readonly<Record<number, number>> = {
  0: 200,
  40000: 400,
  40001: 400,
  40002: 400,
  40100: 401,
  40200: 402,
  42200: 422,
  42900: 429,
  42901: 429,
  50300: 503,
  50303: 503,
  50400: 504,
};

export const NOT_FOUND_STATUS = 404;
export const METHOD_NOT_ALLOWED_STATUS = 405;
export const INTERNAL_ERROR_STATUS = 500;

/** HTTP status for an envelope code; 500 for a code outside the table. */
export function httpStatusFor(code: number): number {
  return HTTP_STATUS_BY_CODE[code] ?? INTERNAL_ERROR_STATUS;
}

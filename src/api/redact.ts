/**
 * Keeping secrets out of messages and events. Two secrets matter: the API key
 * (spends the balance) and the query string of a result URL (a bearer token for
 * the result file). Everything the client puts into an error message or an event
 * passes through here.
 */

/**
 * A URL without credentials, query string or fragment: `https://host/path`.
 * Text that does not parse as a URL is cut at the first `?` or `#`.
 */
export function stripQuery(url: string | URL): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return String(url).split(/[?#]/, 1)[0] ?? "";
  }
}

const URL_WITH_QUERY = /(https?:\/\/[^\s?#"'<>]*)[?#][^\s"'<>]*/gi;

/**
 * Returns a function that removes each secret (and the query string of any URL)
 * from a text. Secrets shorter than 4 characters are ignored: masking every "a"
 * would garble messages without protecting anything real.
 */
export function createScrubber(secrets: readonly string[]): (text: string) => string {
  const needles = secrets.filter((secret) => secret.length >= 4);
  return (text) => {
    let out = text.replace(URL_WITH_QUERY, "$1");
    for (const needle of needles) out = out.split(needle).join("[redacted]");
    return out;
  };
}

/**
 * The first `max` characters of an unexpected response body, printable and on one
 * line, for messages like "the server answered text/html: <!doctype html>…".
 */
export function sanitizeSnippet(text: string, max = 80): string {
  const flat = text
    // eslint-disable-next-line no-control-regex -- control characters are what this removes
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

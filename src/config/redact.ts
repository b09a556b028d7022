/**
 * Shows enough of a key to recognise it (first 4 and last 4 characters) and
 * nothing that would let someone use it. Short keys are masked entirely.
 */
export function redactKey(key: string): string {
  if (key.length < 12) return "*".repeat(Math.max(key.length, 4));
  return `${key.slice(0, 4)}…${key.slice(-4)}`;
}

/**
 * A database URL as it may be shown: without its password, whether in the user part
 * (`postgres://user:password@host`) or a parameter such as `password=` or `sslpassword=`. A URL that does not parse has
 * everything from the user name's colon to its last `@` taken out, and any `password=` value.
 */
export function withoutPassword(location: string): string {
  let shown: string;
  try {
    const url = new URL(location);
    url.password = "";
    shown = url.href;
  } catch {
    shown = location.replace(/^([^:/?#]*:\/\/[^:@/?#]*):.*@/s, "$1@");
  }
  return shown.replace(/([?&][a-z_]*password=)[^&#]*/gi, "$1***");
}

/**
 * A URL as it may be shown when its path is not secret (the service's base URL): without its
 * password (see withoutPassword) and with its query string and fragment, which may carry a
 * token, elided; a URL with none of those as it was written.
 */
export function withoutCredentials(href: string): string {
  const cut = href.search(/[?#]/);
  const base = cut === -1 ? href : href.slice(0, cut);
  const shown = /^[^:/?#]*:\/\/[^/?#]*:[^/?#]*@/.test(base) ? withoutPassword(base) : base;
  return cut === -1 ? shown : `${shown}?…`;
}

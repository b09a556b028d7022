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
 * (`postgres://user:password@host`) or a `password=` parameter. A URL that does not parse has
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
  return shown.replace(/([?&]password=)[^&#]*/gi, "$1***");
}

/**
 * Shows enough of a key to recognise it (first 4 and last 4 characters) and
 * nothing that would let someone use it. Short keys are masked entirely.
 */
export function redactKey(key: string): string {
  if (key.length < 12) return "*".repeat(Math.max(key.length, 4));
  return `${key.slice(0, 4)}…${key.slice(-4)}`;
}

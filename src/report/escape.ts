const HTML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Text from outside (carrier names, file paths, task fields) as HTML text or a quoted
 * attribute value. Control characters other than tab and line feed, which HTML cannot
 * hold, become U+FFFD.
 */
export function escapeHtml(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it replaces
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!).replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, "\uFFFD");
}

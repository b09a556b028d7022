/**
 * Escape codes: the few bulkcheck writes itself (colours), and the neutralising of
 * every other one before text from a file or the service reaches a terminal.
 */

const SGR = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;
export type Style = keyof typeof SGR;

/**
 * `text` wrapped in the escape codes of `style`. Written by hand rather than
 * through a colour library: those decide for themselves from the process's own
 * stdout and environment (and turn off under CI), while bulkcheck decides per
 * injected stream whether colour is on.
 */
export function styled(style: Style, text: string): string {
  const [open, close] = SGR[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/**
 * What a terminal acts on instead of showing, besides the C0 controls (ESC starts
 * every escape sequence: `ESC]0;…BEL` sets the window title, `ESC[2J` clears the
 * screen; CR overwrites a line): DEL, the C1 controls (U+009B is CSI to some
 * terminals), the line and paragraph separators, and the bidi embeddings, overrides
 * and isolates, which reorder the text after them ("Trojan Source").
 */
const ACTIVE_BEYOND_C0 = "\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";
/** Tab and line feed are layout, kept unless a single line is asked for. */
const ACTIVE = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${ACTIVE_BEYOND_C0}]`, "g");
const ACTIVE_OR_LAYOUT = new RegExp(`[\\u0000-\\u001f${ACTIVE_BEYOND_C0}]`, "g");
/** What JSON.stringify leaves as it is of those: it escapes the C0 controls itself. */
const ACTIVE_IN_JSON = new RegExp(`[${ACTIVE_BEYOND_C0}]`, "g");

function visible(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * `text` as a terminal may show it: every character it would act on (see ACTIVE) is
 * written as a visible escape, `\x1b` or `\u202e`, so an escape sequence from a file or
 * the service shows as text and does nothing, and bulkcheck's own colours, added
 * afterwards, are untouched. `singleLine` also escapes tabs and line feeds (a table
 * cell, a value quoted in a sentence).
 */
export function terminalText(text: string, options: { singleLine?: boolean } = {}): string {
  return text.replace(options.singleLine ? ACTIVE_OR_LAYOUT : ACTIVE, visible);
}

/**
 * `value` as JSON, with every character a terminal would act on written as a `\u`
 * escape (JSON.stringify escapes C0 controls, but not DEL, C1 or the bidi controls):
 * the same JSON to a parser, and inert on a terminal.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(ACTIVE_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * `text` cut to at most `max` characters, the last an ellipsis when it was cut: a value
 * from a file or the service quoted in a line for people stays a line, however long it is.
 */
export function shortened(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  // Never half of a character outside the Basic Multilingual Plane.
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

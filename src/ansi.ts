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

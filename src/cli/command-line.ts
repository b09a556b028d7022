/** Words a POSIX shell reads back unchanged without quotes. */
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One argument as a POSIX shell would need it typed: as is when plain, else in single quotes. */
export function shellQuote(word: string): string {
  if (PLAIN_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A pipe the shell made for a process substitution, `<(cmd)`: gone once the command ends. */
const SUBSTITUTED_PIPE = /^\/(?:dev|proc\/self)\/fd\/\d+$/;

/**
 * The command line that runs bulkcheck with these arguments again, ready to paste into a
 * shell; a process substitution's pipe, which no longer exists, is shown as `<(…)` for the
 * user to fill in with what made the list.
 */
export function commandLine(argv: readonly string[]): string {
  return ["bulkcheck", ...argv.map((word) => (SUBSTITUTED_PIPE.test(word) ? "<(…)" : shellQuote(word)))].join(" ");
}

/** Words a POSIX shell reads back unchanged without quotes. */
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One argument as a POSIX shell would need it typed: as is when plain, else in single quotes. */
export function shellQuote(word: string): string {
  if (PLAIN_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command line that runs bulkcheck with these arguments again, ready to paste into a shell. */
export function commandLine(argv: readonly string[]): string {
  return ["bulkcheck", ...argv.map(shellQuote)].join(" ");
}

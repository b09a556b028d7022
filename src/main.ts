/** Entry point used by bin/bulkcheck.js; returns the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  void argv;
  return 0;
}

/** What makes a text unreadable as CSV records. */
export type CsvProblem =
  | "unclosed-quote" // a quoted field that never closes
  | "swallowed-rows" // a quoted field that ran over lines and is followed by more text: an unbalanced quote
  | "endless-quote" // a quoted field longer than any real one: an unbalanced quote swallowing the file
  | "endless-line"; // a record without quotes longer than any real one

/**
 * CSV text that cannot be read as records, naming the line to look at. Neutral about
 * whose text it is: preparation and result handling each turn it into their own error.
 */
export class CsvSyntaxError extends Error {
  override readonly name = "CsvSyntaxError";

  constructor(
    readonly problem: CsvProblem,
    /** The line the bad record (or quoted field) starts on. */
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

export function unclosedQuote(line: number): CsvSyntaxError {
  return new CsvSyntaxError("unclosed-quote", line, `unbalanced quote: the quoted field opened on line ${line} is never closed.`);
}

export function swallowedRows(opened: number, closed: number): CsvSyntaxError {
  return new CsvSyntaxError(
    "swallowed-rows",
    opened,
    `unbalanced quote: the quoted field opened on line ${opened} runs to line ${closed} and is followed by more text.`,
  );
}

/** A record past the reader's 1 MiB limit: inside a quote it is one that swallowed the file, otherwise just an impossibly long line. */
export function endlessRecord(line: number, insideQuote: boolean): CsvSyntaxError {
  return insideQuote
    ? new CsvSyntaxError(
        "endless-quote",
        line,
        `the quoted field opened on line ${line} runs on for more than 1 MiB (an unbalanced quote?).`,
      )
    : new CsvSyntaxError("endless-line", line, `line ${line} is longer than 1 MiB.`);
}

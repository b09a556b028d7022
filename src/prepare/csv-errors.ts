import { InputRejectedError } from "../errors.js";

/** The errors of a list whose quoting is broken, each naming the line to look at. */

const FIX_QUOTING = "Fix the quoting of that row, or export the list again.";

export function unclosedQuote(name: string, line: number): InputRejectedError {
  return new InputRejectedError(`${name}: unbalanced quote: the quoted field opened on line ${line} is never closed.`, { hint: FIX_QUOTING });
}

export function swallowedRows(name: string, opened: number, closed: number): InputRejectedError {
  return new InputRejectedError(
    `${name}: unbalanced quote: the quoted field opened on line ${opened} runs to line ${closed} and is followed by more text.`,
    { hint: FIX_QUOTING },
  );
}

/** A record past the size limit: inside a quote it is one that swallowed the file, otherwise just an impossibly long line. */
export function endlessRecord(name: string, line: number, insideQuote: boolean): InputRejectedError {
  if (insideQuote) {
    return new InputRejectedError(`${name}: the quoted field opened on line ${line} runs on for more than 1 MiB (an unbalanced quote?).`, { hint: FIX_QUOTING });
  }
  return new InputRejectedError(`${name}: line ${line} is longer than 1 MiB; no phone list has lines that long.`, {
    hint: "Check that this is the right file, exported as CSV or plain text.",
  });
}

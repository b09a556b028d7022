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

export function endlessRecord(name: string, line: number): InputRejectedError {
  return new InputRejectedError(`${name}: the record starting on line ${line} never ends (an unbalanced quote?).`, { hint: FIX_QUOTING });
}

import type { CsvSyntaxError } from "../csv/errors.js";
import { InputRejectedError } from "../errors.js";

/** A list whose CSV cannot be read, as the user sees it: the file, the line to look at, and what to do. */
export function unreadableList(name: string, error: CsvSyntaxError): InputRejectedError {
  const hint =
    error.problem === "endless-line"
      ? "No phone list has lines that long: check that this is the right file, exported as CSV or plain text."
      : "Fix the quoting of that row, or export the list again.";
  return new InputRejectedError(`${name}: ${error.message}`, { hint, cause: error });
}

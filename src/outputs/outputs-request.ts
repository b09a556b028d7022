import type { OutputFormat } from "../results/index.js";
import type { ChangesDestination } from "./run-outputs.js";

/**
 * What a command asks of its tasks' outputs, built once by its action from the flags
 * (submit; retry-failed writes the same files of its tasks): what is written where, and
 * when. Paths are as the user gave them, `-` for stdout; formats are decided before any
 * request, so a refusal costs nothing.
 */
export interface OutputsRequest {
  /** Wait until every task has finished (--wait): only then are results fetched and outputs written. */
  wait: boolean;
  /** Keep the results in the ledger (and reuse from it). */
  ledger: boolean;
  /** -o: the results file (or `-`), merged or joined to the list. */
  output?: ResultsOutput | JoinedOutput;
  /** --report: the HTML report's file, or `-`. */
  report?: string;
  /** --changes: the table of what changed since each number's previous check, and `path` as given. */
  changes?: ChangesDestination & { path: string };
  /**
   * Work the changes out even without a --changes file: for their summary line
   * (--changes-summary), the change exit status (--exit-on-change), or whoever reads the
   * command's outcome when it ends (--on-done, --notify). A report always counts them.
   */
  countChanges: boolean;
  /** Replace outputs that exist (--force). */
  force: boolean;
  /** Results older than this many seconds are pruned once the output is written (the profile's ledger-retention). */
  retentionSeconds?: number;
}

/** -o FILE: the tasks' results merged into one file of a format. */
export interface ResultsOutput {
  path: string;
  format: OutputFormat;
  join?: undefined;
}

/** -o FILE --join: the rows of the list the tasks were submitted from, with their results beside them. */
export interface JoinedOutput {
  path: string;
  format: "csv" | "xlsx";
  join: {
    /** The list, read again (absolute path). */
    sourcePath: string;
    /** --safe-csv: neutralise the source's formula-like cells too. */
    safeCsv: boolean;
  };
}

/** Whether each result is fetched as its task finishes: with --wait, for an output, or for the ledger alone. */
export function fetchesResults(request: OutputsRequest): boolean {
  const wantsResults = request.output !== undefined || request.report !== undefined || request.changes !== undefined;
  return request.wait && (request.ledger || wantsResults);
}

/** Whether the changes since the previous check are worked out: only the ledger knows them, and something must want them. */
export function wantsChanges(request: OutputsRequest): boolean {
  return request.ledger && (request.changes !== undefined || request.report !== undefined || request.countChanges);
}

/**
 * What each envelope code means for the user: which error kind (hence exit code)
 * it maps to, and one sentence saying what happened and what to do next.
 */
import type { ErrorKind } from "../errors.js";
import { ApiCode } from "../spec/codes.js";

interface CodeText {
  kind: ErrorKind;
  text: string;
}

const CODE_TEXT: Readonly<Record<number, CodeText>> = {
  [ApiCode.UNSUPPORTED_OR_CONFLICT]: {
    kind: "input",
    text: "The service rejected the request (40000: a value it does not support, such as the service type, country or task id, or conflicting fields). Check those values.",
  },
  [ApiCode.INVALID_JSON]: {
    kind: "input",
    text: "The service could not read the request (40001: invalid JSON body). This is probably a bulkcheck bug; please report it with the --verbose log.",
  },
  [ApiCode.INVALID_PHONE]: {
    kind: "input",
    text: "The service rejected a phone number (40002). Check the list with `bulkcheck validate` and remove the invalid lines.",
  },
  [ApiCode.UNAUTHORIZED]: {
    kind: "auth",
    // What to do depends on where the key came from, which only the caller knows (the CLI adds it as the hint).
    text: "The service rejected the API key (40100).",
  },
  [ApiCode.INSUFFICIENT_BALANCE]: {
    kind: "balance",
    text: "The account balance is too low for this task (40200). Top up the balance or submit a smaller list; `bulkcheck balance` shows what is left.",
  },
  [ApiCode.UNPROCESSABLE]: {
    kind: "input",
    text: "The service cannot accept the task in its current form (42200). Check the file (.txt or .csv, one number per line) and that its size is within the task-size limits.",
  },
  [ApiCode.QUOTA_EXHAUSTED]: {
    kind: "unavailable",
    text: "A usage quota is exhausted, or too many tasks are unfinished (42900). Wait for running tasks to finish, then try again.",
  },
  [ApiCode.SLOTS_OCCUPIED]: {
    kind: "unavailable",
    text: "All request slots are occupied (42901); nothing was charged. Try again after an in-flight request finishes.",
  },
  [ApiCode.MAINTENANCE]: {
    kind: "unavailable",
    text: "The validation service is under maintenance (50300). Try again later.",
  },
  [ApiCode.AT_CAPACITY]: {
    kind: "unavailable",
    text: "The service is at capacity (50303); nothing was charged. Try again in a few minutes.",
  },
  [ApiCode.TIMEOUT]: {
    kind: "unavailable",
    text: "The request did not finish within the service's timeout (50400); nothing was charged. Try again.",
  },
};

/** The error kind of an envelope code; codes the spec does not list are "unexpected". */
export function kindForApiCode(apiCode: number): ErrorKind {
  return CODE_TEXT[apiCode]?.kind ?? "unexpected";
}

/**
 * The user-facing sentence for an envelope code, followed by the service's own
 * `msg` when it has one. `serviceMessage` must already be scrubbed of secrets.
 */
export function apiErrorMessage(apiCode: number, serviceMessage: string): string {
  const base =
    CODE_TEXT[apiCode]?.text ??
    `The service answered with error code ${apiCode}, which this version of bulkcheck does not know. Check that --base-url points at the bulk-checking service, or upgrade bulkcheck.`;
  return serviceMessage === "" ? base : `${base} The service said: "${serviceMessage}".`;
}

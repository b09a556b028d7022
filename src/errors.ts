/**
 * Typed failures shared by every library folder. Each carries a stable `kind`;
 * `cli/exit-codes.ts` is the one place that turns a kind into an exit code.
 * `hint` says what the user can do next and is printed under the message.
 */

export type ErrorKind =
  | "unexpected" // a bug, or a response the client cannot make sense of
  | "usage" // bad flags or missing configuration the user must supply
  | "input" // the list (or request) was rejected, locally or by the service
  | "auth" // no API key, or the service refused it
  | "balance" // not enough balance, or over the user's cost ceiling
  | "task_failed" // a task ended with status `failed`
  | "unavailable" // the service stayed unavailable through every retry
  | "pending" // still processing when the wait ran out, or the command's --timeout ran out
  | "count_mismatch" // --strict: the result's rows disagree with the service's counts
  | "busy" // another bulkcheck process is carrying on the same run
  | "interrupted"; // Ctrl-C / SIGTERM

export interface ErrorDetails {
  hint?: string;
  cause?: unknown;
}

export class BulkcheckError extends Error {
  readonly kind: ErrorKind;
  readonly hint: string | undefined;

  constructor(kind: ErrorKind, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.hint = details.hint;
  }
}

export class UsageError extends BulkcheckError {
  constructor(message: string, details?: ErrorDetails) {
    super("usage", message, details);
  }
}

export class InputRejectedError extends BulkcheckError {
  constructor(message: string, details?: ErrorDetails) {
    super("input", message, details);
  }
}

export class AuthError extends BulkcheckError {
  constructor(message: string, details?: ErrorDetails) {
    super("auth", message, details);
  }
}

export class InsufficientBalanceError extends BulkcheckError {
  constructor(message: string, details?: ErrorDetails) {
    super("balance", message, details);
  }
}

export class TaskFailedError extends BulkcheckError {
  constructor(
    message: string,
    readonly taskIds: readonly string[],
    details?: ErrorDetails,
  ) {
    super("task_failed", message, details);
  }
}

export class PendingError extends BulkcheckError {
  constructor(
    message: string,
    readonly taskIds: readonly string[],
    details?: ErrorDetails,
  ) {
    super("pending", message, details);
  }
}

export class ServiceUnavailableError extends BulkcheckError {
  constructor(message: string, details?: ErrorDetails) {
    super("unavailable", message, details);
  }
}

/** The command's --timeout ran out: requests in flight were aborted and the command stopped. */
/**
 * The store's database cannot be reached or went away (a shared server down, restarted, or
 * cut off): exit 7, like a service that stays unavailable. Nothing recorded is lost; the
 * same command continues the run once the database is back. Here rather than in store/ so
 * that the layers below tell it from the service's unavailability: fetching a result again
 * cannot bring the store back (see api/retry-policies.ts).
 */
export class StoreUnavailableError extends BulkcheckError {
  constructor(message: string, details?: ErrorDetails) {
    super("unavailable", message, {
      hint: "Check that the database server is up and reachable from here, then run the same command again.",
      ...details,
    });
  }
}

export class TimeoutExpiredError extends BulkcheckError {
  constructor(message: string, details?: ErrorDetails) {
    super("pending", message, details);
  }
}

export class InterruptedError extends BulkcheckError {
  constructor(message = "Interrupted.", details?: ErrorDetails) {
    super("interrupted", message, details);
  }
}

/** The service answered something that is not a well-formed envelope (HTML, truncated JSON, no `code`). */
export class ProtocolError extends BulkcheckError {
  constructor(message: string, details?: ErrorDetails) {
    super("unexpected", message, details);
  }
}

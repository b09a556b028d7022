import { ResponseFormatError } from "../api/errors.js";
import { BulkcheckError, type ErrorKind } from "../errors.js";
import { asFileSystemError } from "../file-system-errors.js";
import { EXIT_CODES, exitCodeFor } from "./exit-codes.js";
import { stopSignal } from "./signal-stop.js";

/** How a run that did not succeed is reported: one code for scripts, one exit code, and words for people. */
export interface Failure {
  /** A stable machine name: the error kind ("usage", "auth", …), "terminated" for SIGTERM, "closed_pipe" for a reader that left. */
  code: ErrorKind | "terminated" | "closed_pipe";
  exitCode: number;
  message: string;
  hint?: string | undefined;
  /** Nothing to tell anyone (the reader of stdout went away: it has what it wanted). */
  silent?: boolean;
}

/**
 * The one mapping from whatever a run threw to what the user sees and the exit
 * code. Typed errors carry their kind; Node's own errors for files, ports and
 * pipes are things a user causes (a directory as -o, a full disk, a port in
 * use), never exit 1; only what nobody can fix but us is "unexpected".
 */
export function describeFailure(error: unknown, signal: AbortSignal): Failure {
  const stopped = stopSignal(signal);
  if (stopped && (!(error instanceof BulkcheckError) || error.kind === "interrupted")) {
    // Deep layers say "Interrupted." whichever signal stopped them: name the one that did.
    const generic = !(error instanceof BulkcheckError) || error.message === "Interrupted.";
    const message = generic ? (stopped === "SIGTERM" ? "Terminated." : "Interrupted.") : error.message;
    const hint = error instanceof BulkcheckError ? error.hint : undefined;
    return stopped === "SIGTERM"
      ? { code: "terminated", exitCode: EXIT_CODES.terminated, message, hint }
      : { code: "interrupted", exitCode: EXIT_CODES.interrupted, message, hint };
  }
  if (error instanceof ResponseFormatError && NOT_THE_SERVICE.has(error.status)) {
    // No envelope and "not found": the base URL names some other server, which the user can fix.
    return { code: "usage", exitCode: EXIT_CODES.usage, message: error.message, hint: error.hint };
  }
  if (error instanceof BulkcheckError)
    return { code: error.kind, exitCode: exitCodeFor(error.kind), message: error.message, hint: error.hint };
  const system = systemFailure(error);
  if (system) return system;
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: "unexpected",
    exitCode: EXIT_CODES.unexpected,
    message: `unexpected: ${message}`,
    hint: "This is a bulkcheck bug. Run again with --verbose and report what it prints.",
  };
}

const NOT_THE_SERVICE = new Set([404, 405]);

/** Node's error codes for ports a user can pick badly (the sandbox's); files and disks are in FILE_SYSTEM_ERRORS. */
const ADDRESS_CASES: Readonly<Record<string, { what: string; hint: string }>> = {
  EADDRINUSE: { what: "the address is in use", hint: "Pick another --port, or stop what is using it." },
  EADDRNOTAVAIL: { what: "the address is not available on this machine", hint: "Pick another --host." },
};

function systemFailure(error: unknown): Failure | undefined {
  const { code, path, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof code !== "string") return undefined;
  // The reader of stdout stopped early (`| head`): as a SIGPIPE would, end quietly.
  if (code === "EPIPE")
    return { code: "closed_pipe", exitCode: EXIT_CODES.ok, message: "The reader of the output went away.", silent: true };
  const file = asFileSystemError(error);
  if (file) return { code: file.kind, exitCode: exitCodeFor(file.kind), message: file.message, hint: file.hint };
  const address = ADDRESS_CASES[code];
  if (!address) return undefined;
  const subject = path ?? syscall ?? "a file";
  return { code: "usage", exitCode: EXIT_CODES.usage, message: `Cannot use ${subject}: ${address.what} (${code}).`, hint: address.hint };
}

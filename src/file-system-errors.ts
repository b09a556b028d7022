/**
 * The one table of the file system's refusals a user can cause (a missing path, a full
 * disk, a permission), and the one error kind for them, FileSystemError: what happened,
 * what to do, and the exit code, as the exit-code table (EXIT_CODES in cli/exit-codes.ts) says:
 *
 * - met while writing an output (a temp file, a staged result, the spooled list, -o,
 *   --rejects): exit 3 naming the file, with nothing written, whatever the code: by then
 *   tasks may have been submitted, and exit 2 promises nothing was;
 * - met anywhere else (a path given that cannot be used): the table's kind, exit 2, except
 *   for the codes only writing meets (a full disk, a quota, a file too large), always exit 3.
 */
import { BulkcheckError, type ErrorDetails } from "./errors.js";

export interface FileSystemCase {
  /** What happened, after "Cannot use PATH: " or "Cannot write PATH: ". */
  what: string;
  /** What to do about it. */
  hint: string;
  /** "input" (exit 3) for what only writing meets; "usage" (exit 2) for a path that cannot be used. */
  kind: "usage" | "input";
}

export const FILE_SYSTEM_ERRORS: Readonly<Record<string, FileSystemCase>> = {
  ENOENT: { what: "no such file or directory", hint: "Check the path.", kind: "usage" },
  ENOTDIR: { what: "a part of the path is not a directory", hint: "Check the path.", kind: "usage" },
  EISDIR: { what: "is a directory", hint: "Give the path of a file, not a directory.", kind: "usage" },
  EACCES: { what: "permission denied", hint: "Check the permissions of the file and its directory.", kind: "usage" },
  EPERM: { what: "operation not permitted", hint: "Check the permissions of the file and its directory.", kind: "usage" },
  EROFS: { what: "the file system is read-only", hint: "Write somewhere else.", kind: "usage" },
  EEXIST: { what: "already exists", hint: "Choose another path, or pass --force to replace it.", kind: "usage" },
  ENAMETOOLONG: { what: "the name is too long", hint: "Choose a shorter path.", kind: "usage" },
  ELOOP: { what: "too many symbolic links", hint: "Check the path.", kind: "usage" },
  ENOSPC: { what: "no space left on the device", hint: "Free some space, or write somewhere else.", kind: "input" },
  EDQUOT: { what: "the disk quota is used up", hint: "Free some space, or write somewhere else.", kind: "input" },
  EFBIG: { what: "the file grew larger than this system allows", hint: "Write somewhere else.", kind: "input" },
  EMFILE: { what: "too many open files", hint: "Raise the limit (ulimit -n) or close other programs.", kind: "usage" },
  ENFILE: { what: "too many open files on this system", hint: "Close other programs and try again.", kind: "usage" },
  EIO: { what: "an input/output error on the device", hint: "Check the disk or device.", kind: "usage" },
};

/** The hint of a refused write unless the caller knows better (tasks that go on at the service). */
const WRITE_HINT = "Free some space or choose another path, then run the same command again.";

/**
 * The file system refused a path (`writing` false: exit 2, or 3 for a full disk) or the
 * write of an output (`writing` true: exit 3, nothing written). `path` is the file the user
 * knows (the destination, not its temp file) when there is one.
 */
export class FileSystemError extends BulkcheckError {
  constructor(
    readonly path: string | undefined,
    readonly systemCode: string,
    readonly writing: boolean,
    details: ErrorDetails = {},
  ) {
    const known = FILE_SYSTEM_ERRORS[systemCode]!;
    const message = writing
      ? `Cannot write ${path}: ${known.what} (${systemCode}); nothing was written.`
      : `Cannot use ${path ?? "a file"}: ${known.what} (${systemCode}).`;
    super(writing ? "input" : known.kind, message, { hint: writing ? WRITE_HINT : known.hint, ...details });
  }

  /** The same failure with another hint (e.g. that the submitted tasks go on). */
  withHint(hint: string): FileSystemError {
    return new FileSystemError(this.path, this.systemCode, this.writing, { hint, cause: this.cause });
  }
}

/** The table's code of a Node error the file system raised, if it has one. */
function knownCode(error: unknown): string | undefined {
  if (error instanceof BulkcheckError) return undefined;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" && Object.hasOwn(FILE_SYSTEM_ERRORS, code) ? code : undefined;
}

/** A FileSystemError writing `path` when `error` is a file-system refusal of the write; otherwise `error` as it was. */
export function asOutputWriteError<E>(error: E, path: string): E | FileSystemError {
  const code = knownCode(error);
  return code === undefined ? error : new FileSystemError(path, code, true, { cause: error });
}

/** A FileSystemError for a Node error met outside a write (its own path, or its syscall, named); undefined for others. */
export function asFileSystemError(error: unknown): FileSystemError | undefined {
  const code = knownCode(error);
  if (code === undefined) return undefined;
  const { path, syscall } = error as NodeJS.ErrnoException;
  return new FileSystemError(path ?? syscall, code, false, { cause: error });
}

import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  ApiError,
  ConnectionError,
  HttpStatusError,
  RefusedTaskError,
  ResponseFormatError,
  ResultNotPublishedError,
  ResultUrlExpiredError,
  RetriesExhaustedError,
} from "../../src/api/errors.js";
import { describeFailure, type Failure } from "../../src/cli/failure.js";
import { SignalStop } from "../../src/cli/signal-stop.js";
import { RunBusyError } from "../../src/run/lease.js";
import { StoreDamagedError, StoreTooNewError } from "../../src/store/health.js";
import { RunRecordError } from "../../src/store/health.js";
import { StoreUnavailableError } from "../../src/store/store.js";
import { unclosedQuote } from "../../src/csv/errors.js";
import {
  AuthError,
  BulkcheckError,
  InputRejectedError,
  InsufficientBalanceError,
  InterruptedError,
  PendingError,
  ProtocolError,
  ServiceUnavailableError,
  TaskFailedError,
  TimeoutExpiredError,
  UsageError,
} from "../../src/errors.js";
import { unreadableList } from "../../src/prepare/csv-errors.js";
import { undecodableError, UndecodableText } from "../../src/prepare/decode.js";
import { NotAWorkbook } from "../../src/prepare/workbook-sheets.js";
import {
  DestinationExistsError,
  DestinationIsSourceError,
  DestinationNotReplaceableError,
  ResultFileError,
  RowCountMismatchError,
} from "../../src/results/errors.js";
import { FileSystemError } from "../../src/file-system-errors.js";
import { ApiCode } from "../../src/spec/codes.js";
import { runCli } from "../helpers/cli.js";

/**
 * Issue 14: exit 1 means a bug (or an answer from the service nobody can read),
 * never a situation a user can cause. This walks every error class the code
 * defines or throws, found by reading src/, and every Node system error a user
 * can provoke, and checks where each lands.
 */
const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const running = new AbortController().signal;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

/** Every `class XxxError` and every `new XxxError(` in src/. */
function errorNamesInSource(): Set<string> {
  const names = new Set<string>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/\bclass (\w+) extends (?:\w*Error)\b/g)) names.add(match[1]!);
    for (const match of text.matchAll(/\bnew (\w*Error)\(/g)) names.add(match[1]!);
  }
  return names;
}

const apiError = (code: number) => new ApiError(code, "", 400, undefined);
const lastFailure = apiError(ApiCode.SLOTS_OCCUPIED);

/** An example of each error, by the class name the source uses. */
const EXAMPLES: Record<string, ReadonlyArray<[what: string, error: unknown]>> = {
  UsageError: [["bad flags", new UsageError("bad")]],
  InputRejectedError: [["a list the service cannot take", new InputRejectedError("no")]],
  AuthError: [["no key", new AuthError("no key")]],
  InsufficientBalanceError: [["low balance", new InsufficientBalanceError("low")]],
  TaskFailedError: [["a failed task", new TaskFailedError("failed", ["a"])]],
  PendingError: [["--timeout ran out", new PendingError("pending", ["a"])]],
  ServiceUnavailableError: [["maintenance", new ServiceUnavailableError("down")]],
  InterruptedError: [["Ctrl-C", new InterruptedError()]],
  // A team's store gone away (or never reached): exit 7, like a service that stays unavailable.
  StoreUnavailableError: [["the shared store's server down", new StoreUnavailableError("PostgreSQL at db.example.com is not answering")]],
  StoreDamagedError: [
    ["a store overwritten with a CSV file", new StoreDamagedError("/home/a/.local/state/bulkcheck/bulkcheck.db", "file is not a database")],
  ],
  // A run's record that is not what bulkcheck writes: exit 3, as a damaged store.
  RunRecordError: [["a run's plan changed by hand", new RunRecordError("20261127-120000-abcdef", "plan", "its version is 2, not 1")]],
  StoreTooNewError: [["a store a newer bulkcheck migrated", new StoreTooNewError("/home/a/.local/state/bulkcheck/bulkcheck.db", 99, 1)]],
  // --if-busy exit: another process carries on the same run; nothing was done here.
  RunBusyError: [["a run another process holds", new RunBusyError("20261127-120000-abcdef", { host: "elsewhere", pid: 7, nonce: "n" })]],
  ApiError: [
    ...Object.values(ApiCode)
      .filter((code) => code !== ApiCode.OK)
      .map((code): [string, unknown] => [`envelope code ${code}`, apiError(code)]),
  ],
  ConnectionError: [["connection refused", new ConnectionError("refused", "refused", false, "ECONNREFUSED", undefined)]],
  RetriesExhaustedError: [["42901 to the end", new RetriesExhaustedError("gave up", 8, 1000, lastFailure)]],
  ResultUrlExpiredError: [["an expired link", new ResultUrlExpiredError("expired", 403)]],
  ResultNotPublishedError: [["a result file not published yet", new ResultNotPublishedError("t1")]],
  HttpStatusError: [
    ["a gateway's 502", new HttpStatusError("502", 502, undefined)],
    ["a gateway's 429", new HttpStatusError("429", 429, undefined)],
  ],
  ResponseFormatError: [["a base URL that is some other server (404 page)", new ResponseFormatError("html", 404, "text/html")]],
  DestinationExistsError: [["-o FILE that exists", new DestinationExistsError("/tmp/x.csv")]],
  DestinationIsSourceError: [["-o onto the list being read", new DestinationIsSourceError("big.csv")]],
  DestinationNotReplaceableError: [["--force onto a FIFO", new DestinationNotReplaceableError("/tmp/fifo", lstatSync("/dev/null"))]],
  FileSystemError: [
    ["a full disk while writing -o", new FileSystemError("/data/out.csv", "ENOSPC", true)],
    ["a list that is a directory", new FileSystemError("/data/list.csv", "EISDIR", false)],
  ],
  // The service's result file is refused (exit 3, like any input refused): unusable, or breaking the rules of what it may hold.
  ResultFileError: [
    ["a zip without a CSV", new ResultFileError("ZIP_NO_CSV", "no csv")],
    ["200 rows for 20 numbers uploaded", new ResultFileError("IDENTIFIER_NOT_UPLOADED", "not uploaded")],
  ],
  TimeoutExpiredError: [["--timeout ran out with a request in flight", new TimeoutExpiredError("took too long")]],
  RowCountMismatchError: [["--strict with too few rows", new RowCountMismatchError("2 rows; 3 expected")]],
  CsvSyntaxError: [["a list with an unclosed quote, as preparation words it", unreadableList("crm.csv", unclosedQuote(3))]],
  UndecodableText: [
    ["a binary file as a list, as preparation words it", undecodableError("x.xlsx", new UndecodableText("nul", "utf8", ""), 1)],
  ],
};

/** What may end with exit 1, and why that is right. */
const EXIT_1: Record<string, ReadonlyArray<[what: string, error: unknown]>> = {
  // The service answered something that is not an envelope: nobody but the service can fix it.
  ProtocolError: [["an unreadable answer", new ProtocolError("truncated")]],
  ResponseFormatError: [["truncated JSON with 200", new ResponseFormatError("truncated", 200, "application/json")]],
  // A task's answer with a field the client refuses, to a check (an upload's answer becomes exit 7, its task kept: uploads.ts).
  RefusedTaskError: [
    ["a checked task whose created_at is no timestamp", new RefusedTaskError("bad", 200, "application/json", "t1", "bad")],
  ],
  // A 4xx without an envelope that is not "not found": an answer the client cannot read.
  HttpStatusError: [["a proxy's 400 page", new HttpStatusError("400", 400, undefined)]],
  // An envelope code the spec does not list.
  ApiError: [["an unknown envelope code", apiError(49999)]],
  // The kind "unexpected" itself: the API client used after close is a bulkcheck bug.
  BulkcheckError: [["a bug", new BulkcheckError("unexpected", "bug")]],
  // Plain Errors: internal invariants of the sandbox and the worker pool, a broken install, a failed demo step.
  Error: [["an internal invariant", new Error("ledger settled twice")]],
  // The workbook reader's own signal that a zip's main part is another Office document's; openWorkbook catches it.
  NotAWorkbook: [["the signal escaping openWorkbook", new NotAWorkbook()]],
  // The shared strings table past 4 GiB, which the shared strings part's 1 GiB limit keeps out of reach.
  RangeError: [["the shared strings table overflowing", new RangeError("shared strings past 4 GiB")]],
};

/** Classes whose way to an exit code is not describeFailure's, each checked in its own test below. */
const ELSEWHERE = new Set([
  "InvalidArgumentError", // a flag's parser: commander's usage error, which main maps to 2
  "SignalStop", // only ever the abort reason of a signal: 130 or 143
  "BodyDeadlineError", // an envelope's body too slow: transport classifies its code as a timeout, a ConnectionError
  "TransferTooSlowError", // a result file below its minimum rate: a broken transfer, restarted, then exit 7 (test/e2e/bounds.test.ts)
]);

/** Node's errors a user's files, disk, ports or pipes can cause. */
const SYSTEM_ERRORS = [
  "ENOENT",
  "ENOTDIR",
  "EISDIR",
  "EACCES",
  "EPERM",
  "EROFS",
  "EEXIST",
  "ENAMETOOLONG",
  "ELOOP",
  "ENOSPC",
  "EDQUOT",
  "EFBIG",
  "EMFILE",
  "ENFILE",
  "EIO",
  "EADDRINUSE",
  "EADDRNOTAVAIL",
  "EPIPE",
];

/** Node's errors that only writing can meet. */
const WRITE_TIME_ERRORS = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

function systemError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: something, open '/data/out.csv'`), { code, syscall: "open", path: "/data/out.csv" });
}

describe("describeFailure", () => {
  it("has an example for every error class the source defines or throws", () => {
    const known = new Set([...Object.keys(EXAMPLES), ...Object.keys(EXIT_1), ...ELSEWHERE]);
    const unclassified = [...errorNamesInSource()].filter((name) => !known.has(name));
    expect(unclassified, "classify each new error here: which exit code, and why").toEqual([]);
  });

  it.each(Object.entries(EXAMPLES).flatMap(([name, cases]) => cases.map(([what, error]) => [name, what, error] as const)))(
    "%s (%s) never maps to exit 1",
    (_name, _what, error) => {
      const failure = describeFailure(error, running);
      expect(failure.exitCode).not.toBe(1);
      expect(failure.message).not.toMatch(/^unexpected/);
    },
  );

  it.each(Object.entries(EXIT_1).flatMap(([name, cases]) => cases.map(([what, error]) => [name, what, error] as const)))(
    "%s (%s) is exit 1: a bug, or an answer nobody but the service can fix",
    (_name, _what, error) => {
      expect(describeFailure(error, running).exitCode).toBe(1);
    },
  );

  it.each(SYSTEM_ERRORS)(
    "Node's %s is the user's to fix (exit 2; exit 3 for a full disk or quota), or for EPIPE a reader that left (exit 0, silent)",
    (code) => {
      const failure = describeFailure(systemError(code), running);
      if (code === "EPIPE") {
        expect(failure).toMatchObject({ exitCode: 0, silent: true });
        return;
      }
      // A disk fills up only while writing, maybe after an upload: never exit 2, which promises nothing was uploaded.
      expect(failure).toMatchObject(WRITE_TIME_ERRORS.has(code) ? { code: "input", exitCode: 3 } : { code: "usage", exitCode: 2 });
      expect(failure.message).toContain("/data/out.csv");
      expect(failure.message).toContain(code);
      expect(failure.hint).toBeTruthy();
    },
  );

  it("--strict's row-count mismatch is an outcome of its own, exit 9, not a bug's exit 1", () => {
    expect(describeFailure(new RowCountMismatchError("2 rows; 3 expected"), running)).toMatchObject({
      code: "count_mismatch",
      exitCode: 9,
    });
  });

  it.each([
    ["SIGINT", 130, "interrupted"],
    ["SIGTERM", 143, "terminated"],
  ] as const)("after %s, whatever the run threw ends with %i", (signal, exitCode, code) => {
    const controller = new AbortController();
    controller.abort(new SignalStop(signal));
    for (const error of [new InterruptedError("Stopped waiting."), new DOMException("aborted", "AbortError"), new SignalStop(signal)]) {
      expect(describeFailure(error, controller.signal)).toMatchObject<Partial<Failure>>({ code, exitCode });
    }
    // A layer that only knew it was stopped is told in the words of the signal that stopped it.
    for (const error of [new InterruptedError("Interrupted."), new DOMException("aborted", "AbortError")]) {
      expect(describeFailure(error, controller.signal).message).toBe(signal === "SIGTERM" ? "Terminated." : "Interrupted.");
    }
    expect(describeFailure(new InterruptedError("Stopped waiting."), controller.signal).message).toBe("Stopped waiting.");
    // A typed failure that happened anyway keeps its own code.
    expect(describeFailure(new AuthError("no key"), controller.signal).exitCode).toBe(4);
  });

  it("leaves a flag parser's InvalidArgumentError to commander: exit 2 with its message", async () => {
    const out = await runCli(["wait", "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53", "--interval", "soon"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(
      'expected a duration: a number of seconds (90), or one with a unit: s, m, h or d (90s, 15m, 12h, 7d); got "soon"',
    );
  });

  it("counts an abort without a signal's reason (a test's own controller) as Ctrl-C", () => {
    const controller = new AbortController();
    controller.abort();
    expect(describeFailure(new InterruptedError(), controller.signal).exitCode).toBe(130);
  });
});

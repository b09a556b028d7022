import { describe, expect, it } from "vitest";
import { describeFailure } from "../src/cli/failure.js";
import { asFileSystemError, asOutputWriteError, FILE_SYSTEM_ERRORS, FileSystemError } from "../src/file-system-errors.js";

const running = new AbortController().signal;

function nodeError(code: string, path = "/data/.out.csv.bulkcheck-1.tmp"): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: something, open '${path}'`), { code, syscall: "open", path });
}

/** The codes the README's exit 2 covers when met up front, and exit 3 when met while writing an output. */
const USE_CODES = ["ENOENT", "ENOTDIR", "EISDIR", "EACCES", "EPERM", "EROFS", "EEXIST", "ENAMETOOLONG", "ELOOP", "EMFILE", "ENFILE", "EIO"];
/** The codes only writing meets: exit 3 wherever they come from. */
const WRITE_CODES = ["ENOSPC", "EDQUOT", "EFBIG"];

describe("the one table of file-system errors", () => {
  it("covers every code, each with what happened, what to do and its exit code's kind", () => {
    expect(Object.keys(FILE_SYSTEM_ERRORS).sort()).toEqual([...USE_CODES, ...WRITE_CODES].sort());
    for (const known of Object.values(FILE_SYSTEM_ERRORS)) {
      expect(known.what).toBeTruthy();
      expect(known.hint).toMatch(/\.$/);
    }
  });

  it.each(USE_CODES)("%s met up front is exit 2 naming the path, with what to do", (code) => {
    const failure = describeFailure(nodeError(code, "/data/list.csv"), running);
    expect(failure).toMatchObject({ code: "usage", exitCode: 2, hint: FILE_SYSTEM_ERRORS[code]!.hint });
    expect(failure.message).toBe(`Cannot use /data/list.csv: ${FILE_SYSTEM_ERRORS[code]!.what} (${code}).`);
  });

  it.each(WRITE_CODES)("%s is exit 3 wherever it is met", (code) => {
    expect(describeFailure(nodeError(code), running)).toMatchObject({ code: "input", exitCode: 3 });
    expect(describeFailure(asOutputWriteError(nodeError(code), "/data/out.csv"), running)).toMatchObject({ code: "input", exitCode: 3 });
  });

  // Outcomes that changed: these codes, met while writing an output, used to escape as Node's own error and end
  // with exit 2 naming the temp file ("Cannot use …tmp"), which promises nothing was uploaded.
  it.each(["ENOENT", "ENOTDIR", "EISDIR", "EEXIST", "ENAMETOOLONG", "ELOOP", "EMFILE", "ENFILE"])(
    "%s met while writing an output is exit 3 naming the output, with nothing written",
    (code) => {
      const error = asOutputWriteError(nodeError(code), "/data/out.csv");
      expect(error).toBeInstanceOf(FileSystemError);
      expect(describeFailure(error, running)).toMatchObject({
        code: "input",
        exitCode: 3,
        message: `Cannot write /data/out.csv: ${FILE_SYSTEM_ERRORS[code]!.what} (${code}); nothing was written.`,
      });
    },
  );

  it.each(["EACCES", "EPERM", "EROFS", "EIO"])("%s met while writing an output stays exit 3 naming the output", (code) => {
    expect(describeFailure(asOutputWriteError(nodeError(code), "/data/out.csv"), running)).toMatchObject({ code: "input", exitCode: 3 });
  });

  it("leaves other errors as they were: a connection's, a typed one, one without a code", () => {
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(asOutputWriteError(reset, "/data/out.csv")).toBe(reset);
    expect(asFileSystemError(reset)).toBeUndefined();
    const typed = new FileSystemError("/data/out.csv", "ENOSPC", true);
    expect(asOutputWriteError(typed, "/elsewhere.csv")).toBe(typed);
    expect(asFileSystemError(new Error("boom"))).toBeUndefined();
  });

  it("keeps its code, path and cause when told another hint", () => {
    const cause = nodeError("ENOSPC");
    const error = new FileSystemError("/data/out.csv", "ENOSPC", true, { cause }).withHint("The tasks go on.");
    expect(error).toMatchObject({ path: "/data/out.csv", systemCode: "ENOSPC", writing: true, kind: "input", hint: "The tasks go on." });
    expect(error.cause).toBe(cause);
  });
});

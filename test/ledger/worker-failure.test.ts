import { describe, expect, it } from "vitest";
import { BulkcheckError } from "../../src/errors.js";
import { FileSystemError } from "../../src/file-system-errors.js";
import { failureFrom, failureMessage } from "../../src/ledger/record-result-file.js";

/** What a recording worker's failure becomes on the command's thread (messages are structured clones). */
const across = (error: unknown) => failureFrom(structuredClone(failureMessage(error)));

describe("a recording worker's failure, as the command's thread sees it", () => {
  it("is a full disk of the same path and code, so a caller can still say that the submitted tasks go on", () => {
    const full = new FileSystemError("/state/bulkcheck.db", "ENOSPC", false, { hint: "Free some space." });
    const again = across(full);
    expect(again).toBeInstanceOf(FileSystemError);
    expect(again).toMatchObject({
      path: "/state/bulkcheck.db",
      systemCode: "ENOSPC",
      writing: false,
      kind: full.kind,
      hint: "Free some space.",
    });
    expect(again.message).toBe(full.message);
    expect((again as FileSystemError).withHint("The tasks go on.").hint).toBe("The tasks go on.");
  });

  it("keeps the kind, message and hint of any other error of ours, and an unexpected one stays unexpected", () => {
    const ours = across(new BulkcheckError("unavailable", "The store went away.", { hint: "Run it again." }));
    expect(ours).toBeInstanceOf(BulkcheckError);
    expect(ours).toMatchObject({ kind: "unavailable", message: "The store went away.", hint: "Run it again." });
    const bug = across(new TypeError("x is undefined"));
    expect(bug).not.toBeInstanceOf(BulkcheckError);
    expect(bug).toMatchObject({ name: "TypeError", message: "x is undefined" });
  });
});

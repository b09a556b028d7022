import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { describe, expect, it } from "vitest";
import { exitCodeFor } from "../../src/cli/exit-codes.js";
import { BulkcheckError } from "../../src/errors.js";
import { FileSystemError } from "../../src/file-system-errors.js";
import { failureFrom, failureMessage, GrowingFile, recordResultFile, type RecordingJob } from "../../src/ledger/record-result-file.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { tempDir } from "../helpers/cli.js";

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

describe("a recording's own connection to the embedded store", () => {
  /** Records a one-row result into the SQLite store at `path` as a worker would, and returns its failure as the command's thread sees it. */
  async function recordingFailure(path: string): Promise<Error> {
    const file = new GrowingFile(join(tempDir(), "result.csv"));
    writeFileSync(file.path, "identifier,activated\n447400100001,true\n");
    file.completed(statSync(file.path).size);
    const job: RecordingJob = {
      store: { location: path, env: {} },
      taskRef: 1,
      path: file.path,
      product: "number_validation_batch",
      task: { id: "t1", total: 1, success_cnt: 1 },
      label: "task t1",
    };
    const recording = recordResultFile(job, file, () => Promise.resolve(new Date().toISOString()), new AbortController().signal);
    return across(
      await recording.then(
        () => expect.fail("recorded into a store it must refuse"),
        (error: unknown) => error,
      ),
    );
  }

  /** A store as the command opened it, closed again, everything moved from its write-ahead log into the file, then `sql` run on it. */
  async function store(sql = "SELECT 1"): Promise<string> {
    const path = join(tempDir(), "bulkcheck.db");
    await SqliteStore.open(path).close();
    const db = new Database(path);
    db.exec(sql);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    return path;
  }

  it("refuses a store made newer meanwhile as the command's opening does: the same words, exit 2", async () => {
    const path = await store("PRAGMA user_version = 99");
    const refused = await recordingFailure(path);
    expect(refused).toMatchObject({
      kind: "usage",
      message: expect.stringMatching(/^The store at .* has schema version 99, newer than/) as string,
    });
    expect(exitCodeFor((refused as BulkcheckError).kind)).toBe(2);
  });

  it("names a store damaged meanwhile, with what to do, exit 3, never as a bug", async () => {
    const path = await store();
    writeFileSync(path, "phone,carrier\n+447400100001,Vodafone\n");
    const refused = await recordingFailure(path);
    expect(refused).toMatchObject({ kind: "input", message: expect.stringContaining(`The store ${path} is damaged`) as string });
    expect((refused as BulkcheckError).hint).toContain("bulkcheck store check");
    expect(exitCodeFor((refused as BulkcheckError).kind)).toBe(3);
  });
});

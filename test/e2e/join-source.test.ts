import { copyFileSync, existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2eSandboxes, lines, listText, submitArgs, submittedIds, type E2e } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();

/** A finished task of a 500-number list, and the list's path. */
async function finishedTask(e: E2e): Promise<{ id: string; file: string }> {
  const file = e.file("nightly.txt", listText(500));
  const out = await e.run(submitArgs(file, "--yes", "--quiet", "--wait", "--interval", "0.2"));
  expect(out.code, out.stderr).toBe(0);
  return { id: out.stdout.trim(), file };
}

describe("a join only with the list that was uploaded (issue 12, problem 3)", () => {
  it("refuses submit --wait --join when the source was replaced during the wait (exit 3), and the results still download plainly", async () => {
    const e = await sandbox();
    const file = e.file("nightly.txt", listText(500));
    let exported = false;
    // The exporter runs again while the task is being checked.
    const sleep = async (ms: number, signal?: AbortSignal) => {
      signal?.throwIfAborted();
      if (!exported) writeFileSync(file, listText(800, 5000));
      exported = true;
      e.clock.ms += ms;
      await new Promise((resolve) => setImmediate(resolve));
    };
    const out = await e.run(submitArgs(file, "--yes", "--wait", "--interval", "0.2", "--join", "-o", "checked.csv"), { sleep });
    expect(exported).toBe(true);
    expect(out.code).toBe(3);
    expect(out.stdout).toBe("");
    const id = submittedIds(out.stderr)[0]!;
    expect(out.stderr).toMatch(
      new RegExp(`error: source changed since submit: ${file} \\(size [\\d,]+ → [\\d,]+ bytes, modified .+, content differs\\)`),
    );
    expect(out.stderr).toContain(`The results are there to download without the join: bulkcheck download ${id} -o results.csv`);
    expect(existsSync(join(e.dir, "checked.csv"))).toBe(false);

    const plain = await e.run(["download", id, "-o", "results.csv"]);
    expect(plain.code).toBe(0);
    expect(lines(readFileSync(join(e.dir, "results.csv"), "utf8"))).toHaveLength(501);
  });

  it("refuses download --join with a source changed since the submit unless --force", async () => {
    const e = await sandbox();
    const { id, file } = await finishedTask(e);
    writeFileSync(file, listText(500, 9000));
    const refused = await e.run(["download", id, "--join", file, "-o", "joined.csv"]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`error: source changed since submit: ${file} (`);
    expect(refused.stderr).toContain("content differs");
    expect(existsSync(join(e.dir, "joined.csv"))).toBe(false);

    const forced = await e.run(["download", id, "--join", file, "-o", "joined.csv", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain("joining anyway (--force)");
    expect(lines(readFileSync(join(e.dir, "joined.csv"), "utf8"))).toHaveLength(501);
  });

  it("refuses download --join with another file than the journalled one unless --force, even a copy", async () => {
    const e = await sandbox();
    const { id, file } = await finishedTask(e);
    const copy = join(e.dir, "copy.txt");
    copyFileSync(file, copy);
    const refused = await e.run(["download", id, "--join", copy, "-o", "joined.csv"]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`error: task ${id} was submitted from ${file}, not ${copy}.`);
    expect(existsSync(join(e.dir, "joined.csv"))).toBe(false);
    const forced = await e.run(["download", id, "--join", copy, "-o", "joined.csv", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
  });

  it("joins a source whose modification time moved but whose content is the same", async () => {
    const e = await sandbox();
    const { id, file } = await finishedTask(e);
    utimesSync(file, new Date(Date.UTC(2030, 0, 1)), new Date(Date.UTC(2030, 0, 1)));
    const out = await e.run(["download", id, "--join", file, "-o", "joined.csv"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).not.toContain("warning");
  });
});

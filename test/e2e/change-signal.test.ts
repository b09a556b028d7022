import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2eSandboxes, gbList, identifier, lines, storedRuns, submitAs, WAITING, type E2e } from "../helpers/sandbox.js";

/**
 * A change signal for cron (issue 30, point 3): the summary line counts the numbers that
 * changed, appeared and left since the previous check of the list, --changes-summary says it
 * under --quiet, --exit-on-change makes "something changed" exit 11, and --changes-appeared-left
 * writes the list's own changes as rows of their own kind.
 */
const sandbox = e2eSandboxes();

function activity(file: string, ...extra: string[]): string[] {
  return submitAs(file, "number_activity_batch", "GB", ...extra);
}

/** A list file of these numbers, one a line. */
function list(e: E2e, numbers: readonly string[]): string {
  return e.file("list.txt", numbers.join("\n") + "\n");
}

/** identifier → activated, from an output file. */
function activated(e: E2e, name: string): Map<string, string> {
  return new Map(
    lines(readFileSync(join(e.dir, name), "utf8"))
      .slice(1)
      .map((row) => row.split(",").slice(0, 2) as [string, string]),
  );
}

/** The rows of a changes file, without its header. */
function changeRows(e: E2e, name: string): string[][] {
  return lines(readFileSync(join(e.dir, name), "utf8"))
    .slice(1)
    .map((row) => row.split(","));
}

describe("the change signal", () => {
  it("counts what changed, appeared and left on a drifting sandbox, says it under --quiet, and exits 11", async () => {
    const e = await sandbox({ drift: 0.2, seed: 3 });
    const numbers = gbList(515);
    const path = list(e, numbers.slice(0, 510));
    const first = await e.run(activity(path, ...WAITING, "-o", "a.csv"));
    expect(first.code, first.stderr).toBe(0);
    // The list loses its first 10 numbers and gains 5 new ones.
    list(e, numbers.slice(10));
    const second = await e.run(
      activity(path, ...WAITING, "-o", "b.csv", "--max-age", "0", "--quiet", "--changes", "c.csv", "--changes-appeared-left"),
    );
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toBe("");

    const after = activated(e, "b.csv");
    const was = activated(e, "a.csv");
    const changed = [...after].filter(([id, value]) => was.has(id) && was.get(id) !== value).map(([id]) => id);
    expect(changed.length).toBeGreaterThan(0);
    const rows = changeRows(e, "c.csv");
    expect(rows.filter((row) => row[1] === "activated").map((row) => row[0])).toEqual(changed.sort());
    expect(rows.filter((row) => row[1] === "(appeared)").map((row) => row[0])).toEqual(numbers.slice(510).map(identifier));
    expect(rows.filter((row) => row[1] === "(left)").map((row) => row[0])).toEqual(numbers.slice(0, 10).map(identifier).sort());
    expect(rows.find((row) => row[1] === "(left)")![4]).toMatch(/^2025-01-15T/);

    // A third check, quiet but for the summary asked for by name, with the exit status of a change.
    const third = await e.run(
      activity(path, ...WAITING, "-o", "c3.csv", "--max-age", "0", "--quiet", "--changes-summary", "--exit-on-change", "--json"),
    );
    expect(third.code, third.stderr).toBe(11);
    const moved = [...activated(e, "c3.csv")].filter(([id, value]) => after.get(id) !== value).length;
    expect(lines(third.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Changes since the previous check: ${moved} of 505 numbers checked before \\(activated ${moved}\\); in the list, 0 appeared and 0 left since run \\S+\\.$`,
        ),
      ),
    ]);
    const run = lines(third.stdout)
      .map((line) => JSON.parse(line) as { type: string })
      .find((object) => object.type === "run");
    expect(run).toMatchObject({ changes: { changed: moved, compared: 505, appeared: 0, left: 0, since_run: expect.any(String) } });
  });

  it("exits 0 with --exit-on-change when nothing changed, and writes the changes file with its header alone", async () => {
    const e = await sandbox();
    const path = list(e, gbList(500));
    expect((await e.run(activity(path, ...WAITING))).code).toBe(0);
    const again = await e.run(
      activity(path, ...WAITING, "--max-age", "0", "--exit-on-change", "--changes", "c.csv", "--changes-appeared-left"),
    );
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(join(e.dir, "c.csv"), "utf8")).toBe("identifier,column,previous,current,previous_checked_at,checked_at\n");
    expect(again.stderr).toMatch(
      /Changes since the previous check: 0 of 500 numbers checked before; in the list, 0 appeared and 0 left since run \S+ \(written to c\.csv\)\./,
    );
    expect(again.stderr).not.toContain("exit 11");
  });

  it("compares the list with the last run that checked it whole, passing over one that reused the ledger", async () => {
    const e = await sandbox();
    const numbers = gbList(510);
    const path = list(e, numbers.slice(0, 505));
    expect((await e.run(activity(path, ...WAITING))).code).toBe(0);
    // The same command again within --max-age, the list edited: its 5 new numbers are checked in a task padded with
    // 495 fresh ones and the other 5 are reused, so which numbers it had is not known to the store, and the next
    // comparison goes back to the first run.
    list(e, numbers.slice(5, 510));
    const reused = await e.run(activity(path, ...WAITING, "--changes-summary"));
    expect(reused.code, reused.stderr).toBe(0);
    const [first, second] = await storedRuns(e);
    expect(reused.stderr).toContain(`in the list, 5 appeared and 5 left since run ${first!.id}`);
    list(e, numbers.slice(10, 510));
    const third = await e.run(activity(path, ...WAITING, "--max-age", "0", "--changes-summary", "--exit-on-change"));
    expect(third.code, third.stderr).toBe(11);
    expect(second!.tasks.some((task) => task.taskId)).toBe(true);
    expect(third.stderr).toContain(`in the list, 5 appeared and 10 left since run ${first!.id}`);
  });

  it("needs --wait and the ledger for --exit-on-change and --changes-summary, and --changes for --changes-appeared-left", async () => {
    const e = await sandbox();
    const path = list(e, gbList(500));
    for (const [flags, message] of [
      [["--exit-on-change"], "--exit-on-change needs --wait"],
      [
        ["--wait", "--changes-summary", "--no-ledger"],
        "--changes-summary compares each result with the ledger's previous one, and --no-ledger keeps none.",
      ],
      [["--wait", "--changes-appeared-left"], "--changes-appeared-left adds rows to the --changes file, and there is none."],
    ] as const) {
      const out = await e.run(activity(path, "--yes", ...flags));
      expect(out.code, flags.join(" ")).toBe(2);
      expect(out.stderr).toContain(message);
    }
    expect((await e.run(["config", "set", "ledger", "off"])).code).toBe(0);
    const off = await e.run(activity(path, ...WAITING, "--exit-on-change"));
    expect(off.code).toBe(2);
    expect(off.stderr).toContain('the ledger is off for profile "default"');
    expect(e.state().tasks).toHaveLength(0);
  });
});

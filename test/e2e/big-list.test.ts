import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allowSmallTasks, objectsOf, parseDelimited } from "../helpers/results-fixtures.js";
import { e2eSandboxes, gbList, identifier, lines, listText, submitArgs, submittedIds, type E2e } from "../helpers/sandbox.js";

/**
 * Lists of any size in one run: `submit` schedules more parts than the service's
 * quota of unfinished tasks allows, waiting for its own tasks to finish; with --wait -o
 * each result is fetched as its task finishes and the merged output appears at the end;
 * a run killed anywhere carries on from the store when started again.
 */
const sandbox = e2eSandboxes();

/** Parts of 25 numbers: a list of 25 × n numbers makes n tasks. */
async function smallParts(e: E2e): Promise<void> {
  await allowSmallTasks(e, 25);
}

/** The staging directories left under the config dir (BULKCHECK_CONFIG_DIR holds the state too). */
function staged(e: E2e): string[] {
  const root = join(e.configDir, "staging");
  return existsSync(root) ? readdirSync(root) : [];
}

describe("a list bigger than the quota of unfinished tasks", () => {
  it("is checked in one run, killed twice at random points and started again: 20 tasks, each number charged once, one complete output in list order", async () => {
    // Each run is SIGKILLed once the sandbox has answered a random number of its requests: at a
    // point in its work (just after an upload, a check or a result fetch), whatever the machine's speed.
    let onRequest = (): void => undefined;
    const e = await sandbox({
      fakeClock: false,
      maxUnfinished: 3,
      minTaskSize: 1,
      maxTaskSize: 25,
      numbersPerSecond: 100,
      log: () => onRequest(),
    });
    await smallParts(e);
    const list = e.file("list.txt", listText(500));
    const argv = submitArgs(list, "--yes", "--wait", "--interval", "0.2", "-o", "out.csv");
    // A whole run makes at least 60 requests (20 uploads, 20 checks, 20 result fetches), and a
    // re-run at least one per part (an upload, or a check of the task the journal holds).
    const kills = [3 + Math.floor(Math.random() * 38), 3 + Math.floor(Math.random() * 17)];
    for (const requests of kills) {
      const run = e.spawn(argv);
      let answered = 0;
      const reached = new Promise<boolean>((resolve) => {
        onRequest = () => {
          if (++answered >= requests) resolve(true);
        };
      });
      const cutShort = await Promise.race([reached, run.done.then(() => false)]);
      run.child.kill("SIGKILL");
      await run.done;
      onRequest = () => undefined;
      expect(cutShort, `the run ended before the sandbox had answered ${requests} of its requests`).toBe(true);
      expect(existsSync(join(e.dir, "out.csv")), `a run killed after ${requests} requests left an output`).toBe(false);
    }
    const final = await e.bin(argv);
    expect(final.code, `killed after ${kills.join(" and ")} requests: ${final.stderr}`).toBe(0);

    const state = e.state();
    expect(state.tasks).toHaveLength(20);
    expect(state.tasks.reduce((sum, task) => sum + (task.submitted_lines ?? 0), 0)).toBe(500);
    expect(state.ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(20);
    const charges = state.ledger.filter((entry) => entry.kind === "charge");
    expect(new Set(charges.map((entry) => entry.task_id)).size).toBe(charges.length);
    expect(charges.reduce((sum, entry) => sum + entry.micros, 0)).toBe(500 * state.prices.number_validation_batch);
    expect(state.balance_micros).toBe(state.start_balance_micros - 500 * state.prices.number_validation_batch);
    // At most the results whose transfer a kill cut short were fetched twice.
    expect(state.stats.by_route.result ?? 0).toBeLessThanOrEqual(20 + kills.length * 3);

    // With -o the results are the data: the task ids go to stderr, in list order.
    expect(final.stdout).toBe("");
    expect(submittedIds(final.stderr)).toHaveLength(20);
    expect(new Set(submittedIds(final.stderr))).toEqual(new Set(state.tasks.map((task) => task.id)));
    const rows = objectsOf(parseDelimited(readFileSync(join(e.dir, "out.csv"), "utf8")));
    expect(rows.map((row) => row.identifier)).toEqual(gbList(500).map(identifier));
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect(staged(e)).toEqual([]);
  }, 90_000);

  it("without --wait, returns once every part is uploaded, having waited for its own tasks to finish to get there", async () => {
    const e = await sandbox({ maxUnfinished: 2, minTaskSize: 1, maxTaskSize: 25 });
    await smallParts(e);
    const out = await e.run(submitArgs(e.file("list.txt", listText(150)), "--yes"));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain(
      "The service allows no more unfinished tasks (42900): each remaining part waits for one of this list's tasks to finish",
    );
    const state = e.state();
    expect(state.tasks).toHaveLength(6);
    expect(lines(out.stdout)).toHaveLength(6);
    expect(new Set(lines(out.stdout))).toEqual(new Set(state.tasks.map((task) => task.id)));
    expect(out.stderr).toContain(`Next: bulkcheck wait ${lines(out.stdout).join(" ")}`);
  });

  it("ends with exit 7 and the same command line when other tasks hold the quota and none of its own is unfinished", async () => {
    const e = await sandbox({ maxUnfinished: 1, numbersPerSecond: 1 });
    expect((await e.run(submitArgs(e.file("other.txt", listText(500)), "--yes", "--quiet"))).code).toBe(0);
    const argv = submitArgs(e.file("list.txt", listText(500, 1000)), "--yes", "--max-cost", "5");
    const out = await e.run(argv);
    expect(out.code).toBe(7);
    expect(out.stderr).toContain("(42900)");
    expect(out.stderr).toContain(`carries on where this run stopped: bulkcheck ${argv.join(" ")}`);
    expect(e.state().tasks).toHaveLength(1);
  });

  it("counts the unfinished tasks an earlier run of the list created as its own: the re-run waits for them on 42900", async () => {
    // The run's clock moves only when it waits, so --timeout ends the first run after some checks of its
    // tasks, however slow the machine; a part of 25 numbers takes 100 s on that clock, so within the 60 s no
    // task finishes and makes room for the third part. (60 s is also more than the test may take in real
    // time, so the real timer of --timeout, which cuts requests off, never ends the run first.)
    const e = await sandbox({ maxUnfinished: 2, minTaskSize: 1, maxTaskSize: 25, numbersPerSecond: 0.25 });
    await smallParts(e);
    const list = e.file("list.txt", listText(75));
    const stopped = submitArgs(list, "--yes", "--timeout", "60");
    const first = await e.run(stopped);
    expect(first.code, first.stderr).toBe(8);
    // Counted once the uploads under way at the timeout are recorded: the two that got room always are,
    // even when an upload is still running when the time runs out.
    expect(first.stderr).toContain("Stopped after 60s with 1 of 3 part(s) not uploaded yet.");
    expect(first.stderr).toContain("2 of 3 parts uploaded (2 processing, 0 finished)");
    expect(first.stderr).toContain(`Resume with: bulkcheck ${stopped.join(" ")}`);
    expect(e.state().tasks).toHaveLength(2);
    // Both unfinished tasks hold the quota; they are this list's, so this is a wait, not an exit 7.
    const again = await e.run(submitArgs(list, "--yes"));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("(42900): each remaining part waits for one of this list's tasks to finish");
    const tasks = e.state().tasks;
    expect(tasks).toHaveLength(3);
    expect(lines(again.stdout)).toHaveLength(3);
    expect(new Set(lines(again.stdout))).toEqual(new Set(tasks.map((task) => task.id)));
  });

  it("fetches each result as soon as its task finishes, before the last parts are even uploaded", async () => {
    const log: string[] = [];
    // A part takes 3 s on the run's clock, some 15 checks 0.2 s apart: a result fetch, which starts
    // after some real file work, has that many checks' time to begin before the next parts get room.
    const e = await sandbox({ maxUnfinished: 2, minTaskSize: 1, maxTaskSize: 25, numbersPerSecond: 10, log: (line) => log.push(line) });
    await smallParts(e);
    const out = await e.run(submitArgs(e.file("list.txt", listText(150)), "--yes", "--wait", "--interval", "0.2", "-o", "out.csv"));
    expect(out.code, out.stderr).toBe(0);
    const firstFetch = log.findIndex((line) => line.startsWith("GET /results/"));
    const lastUpload = log.findLastIndex((line) => line.startsWith("POST /api/v1/bulk-tasks code=0"));
    expect(firstFetch).toBeGreaterThan(-1);
    expect(firstFetch).toBeLessThan(lastUpload);
    expect(log.filter((line) => line.startsWith("GET /results/"))).toHaveLength(6);
    // The merged output is written from what was fetched: nothing is checked or downloaded again.
    const lastFetch = log.findLastIndex((line) => line.startsWith("GET /results/"));
    expect(log.slice(lastFetch + 1).filter((line) => line.startsWith("GET /api/v1/bulk-tasks/"))).toEqual([]);
    expect(
      lines(readFileSync(join(e.dir, "out.csv"), "utf8"))
        .slice(1)
        .map((row) => row.split(",")[0]),
    ).toEqual(gbList(150).map(identifier));
  });

  it("joins every part's results back to the source rows with --wait --join", async () => {
    const e = await sandbox({ maxUnfinished: 2, minTaskSize: 1, maxTaskSize: 25 });
    await smallParts(e);
    const csv = ["name,phone", ...gbList(100).map((number, i) => `person ${i},"${number}"`)].join("\n") + "\n";
    const out = await e.run(submitArgs(e.file("crm.csv", csv), "--yes", "--wait", "--interval", "0.2", "--join", "-o", "joined.csv"));
    expect(out.code, out.stderr).toBe(0);
    expect(submittedIds(out.stderr)).toHaveLength(4);
    const rows = objectsOf(parseDelimited(readFileSync(join(e.dir, "joined.csv"), "utf8")));
    expect(rows.map((row) => row.name)).toEqual(gbList(100).map((_, i) => `person ${i}`));
    expect(rows.every((row) => row.activated === "true" || row.activated === "false")).toBe(true);
    expect(staged(e)).toEqual([]);
  });

  it("re-run of an unfinished run checks its tasks instead of uploading the parts again", async () => {
    const e = await sandbox({ minTaskSize: 1, maxTaskSize: 25, numbersPerSecond: 1 });
    await smallParts(e);
    const list = e.file("list.txt", listText(75));
    // Timed out before its tasks finished: the run is not finished, and the same command carries it on.
    const argv = submitArgs(list, "--yes", "--wait", "--interval", "1", "--timeout", "2");
    const first = await e.run(argv);
    expect(first.code).toBe(8);
    expect(lines(first.stdout)).toHaveLength(3);
    const uploads = e.state().stats.by_route.submit;
    const again = await e.run(argv);
    expect(again.code).toBe(8);
    expect(again.stdout).toBe(first.stdout);
    expect(e.state().stats.by_route.submit).toBe(uploads);
    expect(e.state().tasks).toHaveLength(3);
    expect(again.stderr).toContain("Carrying on run");
    expect(again.stderr).toContain("(3 task(s) submitted so far)");
  });
});

describe("progress of a scheduled submit", () => {
  async function run(e: E2e, extra: string[], options: { tty?: boolean } = {}) {
    await smallParts(e);
    return e.run(submitArgs(e.file("list.txt", listText(75)), "--yes", "--wait", "--interval", "0.2", ...extra), options);
  }

  it("is one line per change on stderr when not on a terminal, ending with every part finished and every number checked", async () => {
    const e = await sandbox({ minTaskSize: 1, maxTaskSize: 25 });
    const out = await run(e, []);
    expect(out.code, out.stderr).toBe(0);
    const progress = lines(out.stderr).filter((line) => / parts uploaded /.test(line));
    // Each line with the time elapsed (and, once a task has finished, what is left), printed when the counts change.
    expect(progress[0]).toMatch(/^1 of 3 parts uploaded \(1 processing, 0 finished\); 0 of 75 numbers checked; \d+ s elapsed$/);
    expect(progress.at(-1)).toMatch(/^3 of 3 parts uploaded \(0 processing, 3 finished\); 75 of 75 numbers checked; /);
    expect(new Set(progress.map((line) => line.replace(/; \d+ s elapsed.*$/, ""))).size).toBe(progress.length);
    expect(progress.some((line) => / left$/.test(line))).toBe(true);
    expect(lines(out.stdout)).toHaveLength(3);
    expect(out.stdout).not.toContain("parts uploaded");
  });

  it("is a spinner line on a terminal, and nothing at all with --quiet, on a terminal or not", async () => {
    const spinner = await run(await sandbox({ minTaskSize: 1, maxTaskSize: 25 }), [], { tty: true });
    expect(spinner.code).toBe(0);
    expect(spinner.stderr).toContain("\u001b[?25l");
    expect(spinner.stderr).toContain("parts uploaded");
    const quiet = await run(await sandbox({ minTaskSize: 1, maxTaskSize: 25 }), ["--quiet"], { tty: true });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe("");
    expect(lines(quiet.stdout)).toHaveLength(3);
    const quietPiped = await run(await sandbox({ minTaskSize: 1, maxTaskSize: 25 }), ["--quiet"]);
    expect(quietPiped.code).toBe(0);
    expect(quietPiped.stderr).toBe("");
    expect(lines(quietPiped.stdout)).toHaveLength(3);
  });
});

import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { spreadDelays } from "../helpers/fault-fixtures.js";
import { crmText, e2eSandboxes, lines, listText, storedTasks, submitArgs, submittedIds, type E2e } from "../helpers/sandbox.js";

/**
 * SIGKILL at random points (nothing can be cleaned up or flushed), then the same
 * command again: it must find the task the killed run created, and no partial file
 * may ever sit at the destination. Real processes (bin/bulkcheck.js → dist) and clock.
 */
const sandbox = e2eSandboxes();

/** Runs `jobs` at most `width` at a time. */
async function inBatches<T>(jobs: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < jobs.length; i += width) results.push(...(await Promise.all(jobs.slice(i, i + width).map((job) => job()))));
  return results;
}

/** When to SIGKILL a run: after a delay, or once a condition holds (polled every 2 ms). */
type Kill = { afterMs: number } | { when: () => boolean };

/** Spawns `argv`, SIGKILLs it after `kill.afterMs` (or once `kill.when()` holds), and returns what it had printed. */
async function killed(e: E2e, argv: string[], env: Record<string, string>, kill: Kill) {
  const run = e.spawn(argv, { env });
  const exited = run.done.then(() => true);
  if ("afterMs" in kill) {
    await Promise.race([delay(kill.afterMs), exited]);
  } else {
    // Polled every 2 ms: the moment to catch (a temp file being written) is short.
    while (!kill.when() && run.child.exitCode === null) await delay(2);
  }
  run.child.kill("SIGKILL");
  const result = await run.done;
  return { ...result, killed: run.child.signalCode === "SIGKILL" };
}

/** A file's lines, sorted. */
function sortedLines(bytes: Buffer): string[] {
  return bytes.toString("utf8").split("\n").sort();
}

/** Whether a writer of `output` has its temp file open in `dir`. */
function writing(dir: string, output: string): boolean {
  return readdirSync(dir).some((name) => name.startsWith(`.${output}.bulkcheck-`));
}

/** A run's output of one task: the task's result as `download -o` writes it, each line ending with when the task was checked. */
function withCheckedAt(result: Buffer, checkedAt: string): Buffer {
  const text = result.toString("utf8");
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const [header, ...rows] = text.split(eol).filter((line) => line !== "");
  return Buffer.from([`${header},checked_at`, ...rows.map((row) => `${row},${checkedAt}`)].join(eol) + eol);
}

/** Names in `dir` that are neither the given files nor temp files of a download. */
function strays(dir: string, expected: readonly string[]): string[] {
  return readdirSync(dir).filter((name) => !expected.includes(name) && !/^\..+\.bulkcheck-\d+-[0-9a-f]+(\.[a-z]+)?\.tmp$/.test(name));
}

describe("SIGKILL during submit --wait -o", () => {
  it("re-running the killed command returns the same task, one per list, and a complete file", async () => {
    const e = await sandbox({ fakeClock: false, retryAfterSeconds: 1 });
    const tmp = join(e.dir, "tmp");
    mkdirSync(tmp);
    const env = { TMPDIR: tmp };
    const delays = spreadDelays(8, 1500);
    const runs = delays.map((afterMs, i) => {
      const list = e.file(`list-${i}.txt`, listText(500 + i, i * 1000));
      const output = `out-${i}.csv`;
      // --force: the same command must work again whether or not the killed run got as far as writing the file.
      const argv = submitArgs(list, "--yes", "--wait", "--interval", "0.2", "-o", output, "--force");
      return { i, afterMs, list, output, argv };
    });

    await inBatches(
      runs.map((run) => async () => {
        const first = await killed(e, run.argv, env, { afterMs: run.afterMs });
        const left = existsSync(join(e.dir, run.output)) ? readFileSync(join(e.dir, run.output)) : undefined;
        const again = await e.bin(run.argv, { env });
        expect(again.code, again.stderr).toBe(0);
        // With -o the results are the data: the ids are announced on stderr.
        expect(again.stdout).toBe("");
        const announced = submittedIds(first.stderr);
        // A run the kill came too late for had finished: the same command is then a new run, which the ledger serves whole.
        // (A kill during the clean-up after the output was written comes too late as well.)
        const finishedFirst = again.stderr.includes("nothing to upload");
        if (!first.killed && first.code === 0) expect(finishedFirst).toBe(true);
        const [id] = finishedFirst ? announced : submittedIds(again.stderr);
        if (announced.length > 0) expect(announced).toEqual([id]);
        // The sandbox holds exactly one task for this list (sizes differ per list).
        expect(
          e
            .state()
            .tasks.filter((task) => task.submitted_lines === 500 + run.i)
            .map((task) => task.id),
        ).toEqual([id]);
        // Complete: identical to a clean download of the task with when it was checked, and so was anything the killed run left.
        const reference = await e.run(["download", id!, "-o", `reference-${run.i}.csv`, "--quiet"]);
        expect(reference.code).toBe(0);
        // Every row carries when the task was checked: the store's date for it, when the store has one.
        const written = lines(readFileSync(join(e.dir, run.output), "utf8"))[1]!
          .split(",")
          .at(-1)!;
        expect(written).toMatch(/^\d{4}-\d{2}-\d{2}T/);
        const stored = (await storedTasks(e)).find((task) => task.taskId === id)?.checkedAt;
        if (stored !== undefined) expect(written).toBe(stored);
        const expected = withCheckedAt(readFileSync(join(e.dir, `reference-${run.i}.csv`)), written);
        // Served by the ledger (the kill came too late), the output holds the same rows, listed by number rather than in list order.
        if (finishedFirst) expect(sortedLines(readFileSync(join(e.dir, run.output)))).toEqual(sortedLines(expected));
        else expect(readFileSync(join(e.dir, run.output)).equals(expected)).toBe(true);
        if (left) expect(left.equals(expected), `a partial ${run.output} was left by the run killed after ${run.afterMs} ms`).toBe(true);
      }),
      4,
    );

    const state = e.state();
    expect(state.tasks).toHaveLength(runs.length);
    expect(state.ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(runs.length);
    // The re-runs removed what the killed runs left next to their outputs.
    const files = runs.flatMap((run) => [run.output, `reference-${run.i}.csv`, `list-${run.i}.txt`]);
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect(strays(e.dir, [...files, "tmp"])).toEqual([]);
    // Nor do prepared upload files (the numbers themselves) pile up in the temp directory.
    expect(readdirSync(tmp)).toEqual([]);
  }, 120_000);

  it("removes the prepared upload a run killed mid-upload left in the temp directory, on the next run", async () => {
    const e = await sandbox({ fakeClock: false });
    const tmp = join(e.dir, "tmp");
    mkdirSync(tmp);
    const argv = submitArgs(e.file("list.txt", listText(500)), "--yes");
    // The upload is held at the service until the process is killed.
    e.sandbox.scriptFaults([{ route: "submit", fault: "slow", delayMs: 30_000 }]);
    const first = await killed(e, argv, { TMPDIR: tmp }, { when: () => e.state().scripted_faults_pending === 0 });
    expect(first.killed).toBe(true);
    const left = readdirSync(tmp);
    expect(left).toEqual([expect.stringMatching(/^bulkcheck-\d+-/)]);
    // The prepared list and the run's part made of it.
    expect(readdirSync(join(tmp, left[0]!)).sort()).toEqual(["list-upload.txt", "part-1.txt"]);

    const again = await e.bin(argv, { env: { TMPDIR: tmp } });
    expect(again.code, again.stderr).toBe(0);
    expect(e.state().tasks.map((task) => task.id)).toEqual([again.stdout.trim()]);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe("SIGKILL during download -o", () => {
  it("never leaves a partial destination, and the same command then writes the complete file and removes the temp files", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 1_000_000, balanceMicros: 1_000_000_000 });
    // A result of 20,000 rows, big enough that a kill often lands mid-transfer.
    const id = (await e.run(submitArgs(e.file("list.txt", listText(20_000)), "--yes", "--quiet"))).stdout.trim();
    expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
    expect((await e.run(["download", id, "-o", "reference.csv", "--quiet"])).code).toBe(0);
    const expected = readFileSync(join(e.dir, "reference.csv"));
    expect(lines(expected.toString("utf8")).length).toBeGreaterThan(15_000);

    /** Kills `download -o output` as `kill` says, then runs it again: whatever the moment, the file is complete or absent, then complete. */
    const killAndRunAgain = async (output: string, kill: Kill) => {
      const argv = ["download", id, "-o", output];
      const first = await killed(e, argv, {}, kill);
      const path = join(e.dir, output);
      const left = existsSync(path);
      if (left) expect(readFileSync(path).equals(expected), `a partial ${output} was left`).toBe(true);
      const again = await e.bin(argv);
      if (left) {
        // The killed run had put the file in place (its temp file may still have been there): the same command refuses to overwrite it.
        expect(again.code).toBe(2);
        expect(again.stderr).toContain("already exists");
      } else {
        expect(again.code, again.stderr).toBe(0);
      }
      expect(readFileSync(path).equals(expected)).toBe(true);
      return { killedBeforeDone: first.killed && !left, afterMs: "afterMs" in kill ? kill.afterMs : "mid-write" };
    };
    const outcomes = await inBatches(
      spreadDelays(6, 1500).map((afterMs, i) => () => killAndRunAgain(`out-${i}.csv`, { afterMs })),
      4,
    );
    // Deterministically mid-write, on a machine however busy: the service holds the result back while the temp file is open.
    for (const output of ["held-1.csv", "held-2.csv"]) {
      e.sandbox.scriptFaults([{ route: "result", fault: "slow", delayMs: 60_000 }]);
      const held = () => e.state().scripted_faults_pending === 0 && writing(e.dir, output);
      outcomes.push(await killAndRunAgain(output, { when: held }));
    }
    console.info(`download kills: ${JSON.stringify(outcomes)}`);
    expect(outcomes.filter((outcome) => outcome.killedBeforeDone).length).toBeGreaterThanOrEqual(2);
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 120_000);
});

describe("SIGKILL during validate -o and --rejects", () => {
  it("never leaves a partial upload list or rejects file, and the same command then writes both whole", async () => {
    const e = await sandbox({ fakeClock: false });
    e.file("list.csv", crmText(50_000));
    const outputsOf = (run: number | string) => [`upload-${run}.txt`, `rejects-${run}.csv`] as const;
    const argvOf = ([upload, rejects]: readonly [string, string]) => [
      "validate",
      "list.csv",
      "--country",
      "GB",
      "-o",
      upload,
      "--rejects",
      rejects,
      "--force",
    ];
    const reference = await e.bin(argvOf(outputsOf("reference")));
    expect(reference.code, reference.stderr).toBe(0);
    const expected = outputsOf("reference").map((name) => readFileSync(join(e.dir, name)));
    const kills: Kill[] = [
      // The moment either file (or its temp file) appears.
      ...[0, 1].map((run) => ({ when: () => outputsOf(run).some((name) => existsSync(join(e.dir, name)) || writing(e.dir, name)) })),
      ...spreadDelays(2, 1500).map((afterMs) => ({ afterMs })),
    ];
    await inBatches(
      kills.map((kill, run) => async () => {
        const outputs = outputsOf(run);
        await killed(e, argvOf(outputs), {}, kill);
        outputs.forEach((name, i) => {
          const path = join(e.dir, name);
          if (existsSync(path)) expect(readFileSync(path).equals(expected[i]!), `a partial ${name} was left`).toBe(true);
        });
        const again = await e.bin(argvOf(outputs));
        expect(again.code, again.stderr).toBe(0);
        outputs.forEach((name, i) => expect(readFileSync(join(e.dir, name)).equals(expected[i]!), name).toBe(true));
      }),
      2,
    );
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 120_000);
});

describe("SIGKILL during download --join", () => {
  it("never leaves a partial joined file, and the next run removes the temp file the killed one left", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 1_000_000, balanceMicros: 1_000_000_000 });
    e.file("crm.csv", crmText(20_000));
    const submitted = await e.bin(submitArgs("crm.csv", "--quiet", "--wait", "--interval", "0.2"));
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    const argvOf = (output: string) => ["download", id, "--join", "crm.csv", "-o", output, "--force"];
    expect((await e.bin(argvOf("reference.csv"))).code).toBe(0);
    const expected = readFileSync(join(e.dir, "reference.csv"));
    const kills: Kill[] = [
      ...[0, 1].map((run) => ({ when: () => writing(e.dir, `joined-${run}.csv`) })),
      ...spreadDelays(2, 1500).map((afterMs) => ({ afterMs })),
    ];
    await inBatches(
      kills.map((kill, run) => async () => {
        const output = `joined-${run}.csv`;
        await killed(e, argvOf(output), {}, kill);
        const path = join(e.dir, output);
        if (existsSync(path)) expect(readFileSync(path).equals(expected), `a partial ${output} was left`).toBe(true);
        const again = await e.bin(argvOf(output));
        expect(again.code, again.stderr).toBe(0);
        expect(readFileSync(path).equals(expected)).toBe(true);
      }),
      2,
    );
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 120_000);
});

import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../src/sandbox/random.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";
import { crmText, e2eSandboxes, lines, listText, storedTasks, submitArgs, submittedIds, type E2e } from "../helpers/sandbox.js";

/**
 * SIGKILL in a named phase of a command (nothing can be cleaned up or flushed), then the
 * same command again: it must find the task the killed run created, and no partial file
 * may ever sit at the destination. Each kill lands in its phase, which the test checks by
 * a sign of it (a request the sandbox holds, the store's task row, a temporary file) while
 * the run is stopped just before the kill; where in the phase it lands is drawn from one
 * seeded generator. Real processes (bin/bulkcheck.js → dist) and clock.
 */
const sandbox = e2eSandboxes();
const random = mulberry32(35);
/** Up to `most` steps (see killedIn) further into a phase, drawn from the seeded generator. */
const stepsInto = (most: number) => Math.floor(random() * (most + 1));
/** Steps into a phase that lasts until the kill (held by the sandbox or the test), or for seconds. */
const LONG_PHASE = 100;
/** Steps into a phase that lasts a few milliseconds (writing a file). */
const SHORT_PHASE = 2;
/** A request the sandbox holds until the process is killed (the test ends long before). */
const HELD_MS = 60_000;

/** Where a run is killed: the phase's name, and a sign that holds while the run is in it. */
interface Phase {
  name: string;
  reached: () => boolean;
}

/**
 * Spawns `argv` and runs it in steps of about a millisecond (SIGCONT, a pause, SIGSTOP),
 * looking for `phase`'s sign between steps, while the run is stopped: however short the
 * phase, the run is caught in it. Then `steps` more steps into it, the sign looked at once
 * more while the run is stopped, and SIGKILL, which lands where the sign says. Fails when
 * the run ends before its phase, or leaves it within those steps. Returns what the run
 * had printed.
 */
async function killedIn(e: E2e, argv: string[], env: Record<string, string>, phase: Phase, steps: number) {
  const run = e.spawn(argv, { env });
  const ended = () => run.child.exitCode !== null || run.child.signalCode !== null;
  const signal = (name: NodeJS.Signals) => {
    if (!ended()) run.child.kill(name);
  };
  const step = async () => {
    signal("SIGCONT");
    await delay(1);
    signal("SIGSTOP");
  };
  signal("SIGSTOP");
  while (!ended() && !phase.reached()) await step();
  expect(ended(), `the run ended before its ${phase.name} phase:\n${run.output().stderr}`).toBe(false);
  for (let taken = 0; taken < steps && phase.reached(); taken++) await step();
  expect(phase.reached(), `the run left its ${phase.name} phase within ${steps} steps`).toBe(true);
  run.child.kill("SIGKILL");
  const result = await run.done;
  expect(run.child.signalCode, `the run ended by itself in its ${phase.name} phase`).toBe("SIGKILL");
  return result;
}

/** A task row of the store, as far as the phases of a run tell them apart. */
interface TaskRow {
  taskId: string | null;
  status: string | null;
  staged: boolean;
  recorded: boolean;
}

/**
 * The task rows of `e`'s store (none before the store exists), read on a connection the
 * test keeps open: the store's write lock is the test's to take, and a recording then waits.
 * Opening a store of one's own meanwhile would close this connection's locks with it.
 */
class StoreView {
  #db: SqliteDb | undefined;
  #locked = false;

  constructor(private readonly path: string) {}

  tasks(): TaskRow[] {
    if (this.#db === undefined && !existsSync(this.path)) return [];
    if (this.#db === undefined) {
      this.#db = SqliteDb.inspect(this.path);
      // Never wait for the lock: the run holding it may be stopped (see killedIn).
      this.#db.exec("PRAGMA busy_timeout = 0");
    }
    try {
      return this.#db.rows("SELECT task_id, status, staged_file, recorded_at FROM tasks").map(([taskId, status, staged, recorded]) => ({
        taskId: taskId as string | null,
        status: status as string | null,
        staged: staged !== null,
        recorded: recorded !== null,
      }));
    } catch {
      // The command that created the store has not made its tables yet.
      return [];
    }
  }

  /** Holds the store's write lock (taking it, unless the run has it): every write of the run then waits, until `close`. */
  locked(): boolean {
    if (!this.#locked && this.#db !== undefined) {
      try {
        this.#db.exec("BEGIN IMMEDIATE");
        this.#locked = true;
      } catch {
        // The run is writing: at the next step.
      }
    }
    return this.#locked;
  }

  close(): void {
    if (this.#locked) this.#db!.exec("ROLLBACK");
    this.#locked = false;
    this.#db?.close();
    this.#db = undefined;
  }
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
  /**
   * The phases of `submit --wait -o` before its output, each with how the test holds the run
   * in it: the sandbox holds the upload or the result request, or its clock (the task then
   * stays processing), or the test holds the store's write lock (the result is staged, and
   * its recording into the ledger waits).
   */
  const PHASES = ["upload", "processing", "download", "recording"] as const;
  type PhaseName = (typeof PHASES)[number];
  /** A row the killed run must have left in each phase: what it knew when the kill landed. */
  const LEFT: Record<PhaseName, (row: TaskRow) => boolean> = {
    upload: (row) => row.taskId === null,
    processing: (row) => row.taskId !== null && row.status === "processing",
    download: (row) => row.status === "success" && !row.staged,
    recording: (row) => row.staged && !row.recorded,
  };

  it.each(PHASES.map((phase) => [phase, stepsInto(LONG_PHASE)] as const))(
    "killed in its %s phase (%i steps in), the same command carries on with the same task and writes the complete file",
    async (phaseName, steps) => {
      /** The sandbox's clock: real time, or held still while the test holds a task processing. */
      const clock: { heldAt?: number } = {};
      const e = await sandbox({ fakeClock: false, retryAfterSeconds: 1, now: () => clock.heldAt ?? Date.now() });
      const tmp = join(e.dir, "tmp");
      mkdirSync(tmp);
      const env = { TMPDIR: tmp };
      const output = "out.csv";
      const argv = submitArgs(e.file("list.txt", listText(500)), "--wait", "--interval", "0.2", "-o", output);
      const store = new StoreView(join(e.configDir, "bulkcheck.db"));
      const row = () => store.tasks()[0];
      const held = () => e.state().scripted_faults_pending === 0;
      const phase: Phase = { name: phaseName, reached: () => row() !== undefined && LEFT[phaseName](row()!) };
      if (phaseName === "upload") {
        e.sandbox.scriptFaults([{ route: "submit", fault: "slow", delayMs: HELD_MS }]);
        phase.reached = () => held() && row()?.taskId === null;
      } else if (phaseName === "processing") {
        clock.heldAt = Date.now();
      } else if (phaseName === "download") {
        e.sandbox.scriptFaults([{ route: "result", fault: "slow", delayMs: HELD_MS }]);
        phase.reached = () => held() && row() !== undefined && LEFT.download(row()!);
      } else {
        // Locked the moment the result is staged, while the recording's worker is still starting (most of a second
        // here): it then waits to write. A lock that came after it had recorded would leave the phase, and fail the test.
        phase.reached = () => row() !== undefined && LEFT.recording(row()!) && store.locked();
      }

      let first: Awaited<ReturnType<typeof killedIn>>;
      try {
        first = await killedIn(e, argv, env, phase, steps);
        // What the run knew when it was killed, still in the store: the kill landed in its phase.
        expect(store.tasks()).toHaveLength(1);
        expect(LEFT[phaseName](row()!), JSON.stringify(row())).toBe(true);
      } finally {
        store.close();
        delete clock.heldAt;
      }
      // Every phase comes before the output: nothing, partial or whole, is at the destination.
      expect(existsSync(join(e.dir, output))).toBe(false);
      const announced = submittedIds(first.stderr);
      expect(announced).toHaveLength(phaseName === "upload" ? 0 : 1);

      const again = await e.bin(argv, { env });
      expect(again.code, again.stderr).toBe(0);
      // With -o the results are the data: the ids are announced on stderr.
      expect(again.stdout).toBe("");
      const [id] = submittedIds(again.stderr);
      if (phaseName !== "upload") expect(announced).toEqual([id]);
      // The sandbox holds exactly one task, this one.
      expect(e.state().tasks.map((task) => task.id)).toEqual([id]);
      expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
      // Complete: identical to a clean download of the task with when it was checked.
      const reference = await e.run(["download", id!, "-o", "reference.csv", "--quiet"]);
      expect(reference.code).toBe(0);
      // Every row carries when the task was checked: the store's date for it.
      const written = lines(readFileSync(join(e.dir, output), "utf8"))[1]!
        .split(",")
        .at(-1)!;
      expect(written).toBe((await storedTasks(e)).find((task) => task.taskId === id)?.checkedAt);
      const expected = withCheckedAt(readFileSync(join(e.dir, "reference.csv")), written);
      expect(readFileSync(join(e.dir, output)).equals(expected)).toBe(true);
      // The re-run removed what the killed run left next to its output, and in the temp directory (the prepared upload: the numbers themselves).
      expect(strays(e.dir, [output, "reference.csv", "list.txt", "tmp"])).toEqual([]);
      expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
      expect(readdirSync(tmp)).toEqual([]);
    },
    60_000,
  );

  it("removes the prepared upload a run killed mid-upload left in the temp directory, on the next run", async () => {
    const e = await sandbox({ fakeClock: false });
    const tmp = join(e.dir, "tmp");
    mkdirSync(tmp);
    const argv = submitArgs(e.file("list.txt", listText(500)), "--yes");
    // The upload is held at the service until the process is killed.
    e.sandbox.scriptFaults([{ route: "submit", fault: "slow", delayMs: HELD_MS }]);
    const upload = { name: "upload", reached: () => e.state().scripted_faults_pending === 0 };
    await killedIn(e, argv, { TMPDIR: tmp }, upload, stepsInto(LONG_PHASE));
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
  it("killed while the result is on its way, its temp file open, leaves no destination, and the same command then writes the complete file", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 1_000_000, balanceMicros: 1_000_000_000 });
    const id = (await e.run(submitArgs(e.file("list.txt", listText(5_000)), "--yes", "--quiet"))).stdout.trim();
    expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
    expect((await e.run(["download", id, "-o", "reference.csv", "--quiet"])).code).toBe(0);
    const expected = readFileSync(join(e.dir, "reference.csv"));

    for (const output of ["held-1.csv", "held-2.csv"]) {
      // Deterministically mid-write, on a machine however busy: the service holds the result back while the temp file is open.
      e.sandbox.scriptFaults([{ route: "result", fault: "slow", delayMs: HELD_MS }]);
      const receiving = { name: "receiving", reached: () => e.state().scripted_faults_pending === 0 && writing(e.dir, output) };
      const argv = ["download", id, "-o", output];
      await killedIn(e, argv, {}, receiving, stepsInto(LONG_PHASE));
      expect(existsSync(join(e.dir, output))).toBe(false);
      const again = await e.bin(argv);
      expect(again.code, again.stderr).toBe(0);
      expect(readFileSync(join(e.dir, output)).equals(expected)).toBe(true);
    }
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 60_000);
});

describe("SIGKILL during validate -o and --rejects", () => {
  it("killed while preparing, or while writing either file, leaves no partial file, and the same command then writes both whole", async () => {
    const e = await sandbox({ fakeClock: false });
    const tmp = join(e.dir, "tmp");
    mkdirSync(tmp);
    e.file("list.csv", crmText(20_000));
    const argvOf = ([upload, rejects]: readonly string[]) => [
      "validate",
      "list.csv",
      "--country",
      "GB",
      "-o",
      upload!,
      "--rejects",
      rejects!,
      "--force",
    ];
    const reference = ["upload-reference.txt", "rejects-reference.csv"];
    expect((await e.run(argvOf(reference))).code).toBe(0);
    const expected = reference.map((name) => readFileSync(join(e.dir, name)));
    const inPlace = (name: string) => existsSync(join(e.dir, name));
    // Preparation reads the list in a private temp directory for a second or so; then each file is written to its temp
    // file and put in place, the rejects first, within milliseconds each: the kill comes at most two steps in.
    const phases = [
      {
        name: "preparing",
        sign: (outputs: string[]) => readdirSync(tmp).length > 0 && !outputs.some((name) => inPlace(name) || writing(e.dir, name)),
        steps: stepsInto(LONG_PHASE),
      },
      {
        name: "writing the upload list",
        sign: ([upload]: string[]) => writing(e.dir, upload!) && !inPlace(upload!),
        steps: stepsInto(SHORT_PHASE),
      },
      {
        name: "writing the rejects",
        sign: ([, rejects]: string[]) => writing(e.dir, rejects!) && !inPlace(rejects!),
        steps: stepsInto(SHORT_PHASE),
      },
    ];
    for (const [run, { name, sign, steps }] of phases.entries()) {
      const outputs = [`upload-${run}.txt`, `rejects-${run}.csv`];
      await killedIn(e, argvOf(outputs), { TMPDIR: tmp }, { name, reached: () => sign(outputs) }, steps);
      // What the kill came in the middle of is not in place; what was put in place before it is whole.
      expect(sign(outputs)).toBe(true);
      outputs.forEach((output, i) => {
        if (inPlace(output)) expect(readFileSync(join(e.dir, output)).equals(expected[i]!), output).toBe(true);
      });
      const again = await e.bin(argvOf(outputs), { env: { TMPDIR: tmp } });
      expect(again.code, again.stderr).toBe(0);
      outputs.forEach((output, i) => expect(readFileSync(join(e.dir, output)).equals(expected[i]!), output).toBe(true));
    }
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    // The killed runs' private directories went with the next run.
    expect(readdirSync(tmp)).toEqual([]);
  }, 60_000);
});

describe("SIGKILL during download --join", () => {
  it("killed while writing the joined file, leaves no partial file, and the next run removes the temp file the killed one left", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 1_000_000, balanceMicros: 1_000_000_000 });
    e.file("crm.csv", crmText(5_000));
    const submitted = await e.run(submitArgs("crm.csv", "--quiet", "--wait", "--interval", "0.2"));
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    const argvOf = (output: string) => ["download", id, "--join", "crm.csv", "-o", output, "--force"];
    expect((await e.run(argvOf("reference.csv"))).code).toBe(0);
    const expected = readFileSync(join(e.dir, "reference.csv"));
    for (const output of ["joined-1.csv", "joined-2.csv"]) {
      // The joined rows are written within a fraction of a second: the kill comes at most two steps in.
      const joining = { name: "joining", reached: () => writing(e.dir, output) && !existsSync(join(e.dir, output)) };
      await killedIn(e, argvOf(output), {}, joining, stepsInto(SHORT_PHASE));
      expect(existsSync(join(e.dir, output))).toBe(false);
      const again = await e.bin(argvOf(output));
      expect(again.code, again.stderr).toBe(0);
      expect(readFileSync(join(e.dir, output)).equals(expected)).toBe(true);
    }
    expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 60_000);
});

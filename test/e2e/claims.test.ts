import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { e2eSandboxes, gbList, identifier, lines, listText, WAITING, type E2e } from "../helpers/sandbox.js";

/**
 * "Claim before you buy": two runs of different lists that share numbers, started in the
 * same instant, buy each shared number once, whichever claims first; a list whose numbers
 * are mostly in another run's task waits for it rather than failing. Checked against the
 * sandbox's own record of what each task was given (GET /_sandbox/tasks/{id}/lines).
 */
const sandbox = e2eSandboxes();
/** As the real service behaves (a minimum task of 500, some numbers without a result), on the real clock: the runs are separate processes. */
const AS_THE_SERVICE = { minTaskSize: 500, noResultRate: 0.04, fakeClock: false, numbersPerSecond: 5_000 } as const;

function carrier(file: string, ...extra: string[]): string[] {
  return ["submit", file, "--type", "carrier_batch", "--country", "GB", ...extra];
}

/** Every line the sandbox's tasks were given, and those given to more than one task. */
function uploads(e: E2e): { all: Set<string>; twice: string[] } {
  const all = new Set<string>();
  const twice: string[] = [];
  for (const task of e.state().tasks) {
    for (const line of e.sandbox.uploadedLines(task.id)!) {
      if (all.has(line)) twice.push(line);
      all.add(line);
    }
  }
  return { all, twice };
}

/** L: 600 numbers; M: the same 600 and 600 of its own (each part big enough for a task of its own: no padding). */
function overlappingLists(e: E2e, trial: number): { l: string; m: string; numbers: string[] } {
  const offset = trial * 10_000;
  const numbers = gbList(1200, offset);
  return {
    l: e.file(`l-${trial}.txt`, listText(600, offset)),
    m: e.file(`m-${trial}.txt`, numbers.join("\n") + "\n"),
    numbers: numbers.map(identifier),
  };
}

/** Both lists submitted by two processes started in the same instant (which one is spawned first alternates). */
async function startedTogether(e: E2e, trial: number, envs: [Record<string, string>, Record<string, string>] = [{}, {}]) {
  const { l, m, numbers } = overlappingLists(e, trial);
  const order = trial % 2 === 0 ? [l, m] : [m, l];
  const [first, second] = order.map((list, index) => e.spawn(carrier(list, "--yes"), { env: envs[index]! }));
  const results = await Promise.all([first!.done, second!.done]);
  return { results, numbers };
}

/** A second machine: its own config and state directory, the same service and store. */
const machine = (storeUrl: string) => ({ BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-machine-"), BULKCHECK_STORE_URL: storeUrl });

const TRIALS = Array.from({ length: 10 }, (_, trial) => trial);

describe("two different lists sharing numbers, started in the same instant", () => {
  it.each(TRIALS)("on one machine (trial %i): each shared number is uploaded in one task only, and every number once", async (trial) => {
    const e = await sandbox(AS_THE_SERVICE);
    const { results, numbers } = await startedTogether(e, trial);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const { all, twice } = uploads(e);
    expect(twice).toEqual([]);
    expect([...all].sort()).toEqual([...numbers].sort());
    // The run that claimed second says whose claim or task it takes the shared numbers from.
    expect(results.map((result) => result.stderr).join("\n")).toMatch(/In flight: 600 numbers are in task\(s\)/);
  });

  it.each(TRIALS)("on two machines sharing PostgreSQL (trial %i): each shared number is uploaded in one task only", async (trial) => {
    const e = await sandbox(AS_THE_SERVICE);
    const storeUrl = await createTestDatabase();
    const { results, numbers } = await startedTogether(e, trial, [machine(storeUrl), machine(storeUrl)]);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const { all, twice } = uploads(e);
    expect(twice).toEqual([]);
    expect([...all].sort()).toEqual([...numbers].sort());
  });

  it("with --wait --join: both outputs have every source row, each number's result from the one task that bought it", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    const { l, m, numbers } = overlappingLists(e, 0);
    const [a, b] = await Promise.all([
      e.spawn(carrier(l, ...WAITING, "--join", "-o", "l.csv")).done,
      e.spawn(carrier(m, ...WAITING, "--join", "-o", "m.csv")).done,
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(uploads(e).twice).toEqual([]);
    expect(uploads(e).all.size).toBe(numbers.length);
    expect(lines(readFileSync(join(e.dir, "l.csv"), "utf8"))).toHaveLength(600 + 1);
    expect(lines(readFileSync(join(e.dir, "m.csv"), "utf8"))).toHaveLength(1200 + 1);
  });
});

describe("a claim", () => {
  it("counts in flight before its upload is answered, is followed until it becomes a task, and a run with --wait takes its results", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    const list = e.file("list.txt", listText(600));
    // The first run's upload waits for a request slot: its numbers are claimed, with no task yet.
    e.sandbox.scriptFaults([{ route: "submit", fault: "42901", retryAfter: "4", times: 1 }]);
    const first = e.spawn(carrier(list, "--yes"));
    await waitForClaim(e);
    expect(e.state().tasks).toHaveLength(0);
    const grown = e.file("grown.txt", listText(1200));
    const plan = await e.spawn(carrier(grown, "--dry-run", "--json")).done;
    expect(JSON.parse(plan.stdout)).toMatchObject({
      reuse: { in_flight: { numbers: 600, tasks: [{ id: null, run: expect.any(String) }] } },
    });
    const second = await e.spawn(carrier(grown, ...WAITING, "--join", "-o", "grown.csv")).done;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /In flight: 600 numbers are in task\(s\) submitted by another run and still processing \(upload by run \S+ under way\)/,
    );
    expect((await first.done).code).toBe(0);
    expect(uploads(e).twice).toEqual([]);
    expect(e.state().tasks).toHaveLength(2);
    expect(lines(readFileSync(join(e.dir, "grown.csv"), "utf8"))).toHaveLength(1200 + 1);
  });

  it("of a run whose process was killed before its upload was answered is let go: the next run buys those numbers", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    const list = e.file("list.txt", listText(600));
    e.sandbox.scriptFaults([{ route: "submit", fault: "42901", retryAfter: "30", times: 1 }]);
    const first = e.spawn(carrier(list, "--yes"));
    await waitForClaim(e);
    first.child.kill("SIGKILL");
    await first.done;
    // The claim is the only sign of the killed run: no task reached the service.
    expect(e.state().tasks).toHaveLength(0);
    const next = await e.spawn(carrier(e.file("other.txt", listText(1200)), "--yes")).done;
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toContain("In flight");
    expect(uploads(e).all.size).toBe(1200);
  });
});

describe("a list mostly in another run's unfinished task, with a minimum task of 500", () => {
  it("waits for that task with --wait, then fills its own with the fresh results: exit 0 and every row", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    const first = await e.spawn(carrier(e.file("list.txt", listText(600)), "--yes")).done;
    expect(first.code, first.stderr).toBe(0);
    const grown = e.file("grown.txt", listText(630));
    const taken = await e.spawn(carrier(grown, ...WAITING, "--join", "-o", "grown.csv")).done;
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stderr).toContain("Waiting: 30 numbers need a result but are fewer than a task's minimum of 500, while 600 numbers");
    expect(taken.stderr).not.toContain("config set min-task-size");
    expect(lines(readFileSync(join(e.dir, "grown.csv"), "utf8"))).toHaveLength(630 + 1);
    // The second task: the 30 new numbers, padded to 500 with results the first one just brought.
    expect(e.state().tasks.map((task) => task.submitted_lines)).toEqual([600, 500]);
  });

  it("without --wait lets the few numbers wait (exit 0, nothing uploaded) and says how to go on", async () => {
    const e = await sandbox(AS_THE_SERVICE);
    expect((await e.spawn(carrier(e.file("list.txt", listText(600)), "--yes")).done).code).toBe(0);
    const later = await e.spawn(carrier(e.file("grown.txt", listText(630)), "--yes")).done;
    expect(later.code, later.stderr).toBe(0);
    expect(later.stderr).toContain(
      "Waiting: 30 numbers need a result but are fewer than a task's minimum of 500 until the tasks in flight finish",
    );
    expect(later.stderr).not.toContain("config set min-task-size");
    expect(e.state().tasks).toHaveLength(1);
  });
});

describe("a list big enough for a task whose few new numbers cannot be padded", () => {
  it("is told how to go on, never to change the service's minimum", async () => {
    const e = await sandbox({ minTaskSize: 500, noResultRate: 0.9 });
    const first = await e.run(carrier(e.file("list.txt", listText(600)), ...WAITING, "-o", "first.csv"));
    expect(first.code, first.stderr).toBe(0);
    const grown = await e.run(carrier(e.file("grown.txt", listText(630)), "--yes"));
    expect(grown.code).toBe(3);
    expect(grown.stderr).toContain("30 of this list need checking, and too few of its others have a fresh result to fill the task");
    expect(grown.stderr).toContain("--pad never");
    expect(grown.stderr).not.toContain("config set min-task-size");
    // A list that is itself smaller than the minimum is told about the minimum.
    const small = await e.run(carrier(e.file("small.txt", listText(30, 50_000)), "--yes"));
    expect(small.code).toBe(3);
    expect(small.stderr).toContain("config set min-task-size");
  });
});

/** Until a run's claim is in the store: its upload was tried (the sandbox counted a submit) and answered 42901. */
async function waitForClaim(e: E2e): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((e.state().stats.by_route.submit ?? 0) === 0) {
    if (Date.now() > deadline) throw new Error("the first run never tried its upload");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

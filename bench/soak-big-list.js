// The big-list pipeline under faults: lists of many parts, each through a sandbox that
// allows 3 unfinished tasks and answers 30% of requests with a fault. Every list's
// `submit --wait -o` is SIGKILLed at a random moment once or more, then run again until
// it succeeds, as the next cron run would. Afterwards each sandbox must hold one task
// per part, every number charged once, and every output (whatever a killed run left,
// and the final one) whole and identical to a fault-free run's.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { checkBigLists } from "./soak-big-list-checks.js";
import { pool, runInProcess, settledState, SOAK_FAULTS, soakEnv, soakNumbers, startProcess } from "./soak-process.js";

const PRODUCTS = ["number_validation_batch", "number_activity_batch", "carrier_batch"];
const API_KEY = "sk_soak_bigl1st_0123456789abcdef";

/**
 * Runs the scenario and returns `{ ok, failures, figures }`. Options (all optional):
 * lists (20), parallel (4), parts (8 per list), partSize (25 numbers), maxUnfinished (3),
 * chaos (0.3), faults (SOAK_FAULTS), kills (1 to `maxKills` = 3 per list), killWithinMs
 * (4000: a kill lands this long after the start at most), reruns (20 after exit 7 or 8:
 * a run ends on any 50300, which is never retried, and the next carries on),
 * timeout (120: each run's --timeout), firstSeed (101), log, keep.
 */
export async function runBigListSoak(options = {}) {
  const o = {
    lists: 20,
    parallel: 4,
    parts: 8,
    partSize: 25,
    maxUnfinished: 3,
    chaos: 0.3,
    faults: SOAK_FAULTS,
    maxKills: 3,
    killWithinMs: 4000,
    reruns: 20,
    timeout: 120,
    firstSeed: 101,
    log: () => undefined,
    keep: false,
    ...options,
  };
  const { startSandbox } = await import("../dist/sandbox/index.js");
  const { mulberry32 } = await import("../dist/sandbox/random.js");
  const random = mulberry32(o.firstSeed);
  const work = mkdtempSync(join(tmpdir(), "bulkcheck-soak-big-"));
  const lists = [];
  try {
    for (let i = 0; i < o.lists; i++) {
      const seed = o.firstSeed + i;
      const common = { apiKey: API_KEY, seed, minTaskSize: 1, maxTaskSize: o.partSize, numbersPerSecond: 100, balanceMicros: 1e9 };
      const dir = join(work, `list-${i}`);
      mkdirSync(dir, { recursive: true });
      const size = o.parts * o.partSize - (i % o.partSize);
      const list = {
        name: `list-${i}`,
        product: PRODUCTS[i % PRODUCTS.length],
        size,
        parts: Math.ceil(size / o.partSize),
        dir,
        path: join(dir, "list.txt"),
        output: join(dir, "out.csv"),
        kills: Array.from({ length: 1 + Math.floor(random() * o.maxKills) }, () => 50 + random() * o.killWithinMs),
        chaos: await startSandbox({
          ...common,
          maxUnfinished: o.maxUnfinished,
          chaos: o.chaos,
          retryAfterSeconds: 1,
          chaosFaults: o.faults,
        }),
        reference: await startSandbox(common),
        runs: [],
      };
      writeFileSync(list.path, soakNumbers(size, i * 10_000).join("\n") + "\n");
      lists.push(list);
    }
    o.log(`soak (big lists): ${lists.length} lists of ${o.parts} parts, ${o.parallel} at a time`);
    let done = 0;
    await pool(
      lists.map((list) => async () => {
        await soakOne(list, o);
        done++;
        if (done % 5 === 0 || done === lists.length) o.log(`soak (big lists): ${done}/${lists.length} lists done`);
      }),
      o.parallel,
    );
    for (const list of lists) {
      list.state = await settledState(list.chaos);
      list.referenceState = list.reference.inspect();
      const staging = join(list.dir, "config", "staging");
      list.stagingLeft = existsSync(staging) ? readdirSync(staging) : [];
    }
    const { failures, figures } = checkBigLists({ lists, timeoutSeconds: o.timeout, secret: API_KEY });
    return { ok: failures.length === 0, failures, figures, work: o.keep ? work : undefined };
  } finally {
    await Promise.all(lists.flatMap((list) => [list.chaos.close(), list.reference.close()]));
    if (!o.keep) rmSync(work, { recursive: true, force: true });
  }
}

/** One list: the fault-free reference, the killed runs, then runs until one succeeds. */
async function soakOne(list, o) {
  const argv = (output) => [
    "submit",
    list.path,
    "--type",
    list.product,
    "--country",
    "GB",
    "--yes",
    "--wait",
    "--interval",
    "0.2",
    "--timeout",
    String(o.timeout),
    "-o",
    output,
    "--force",
  ];
  const reference = soakEnv({ baseUrl: list.reference.url, apiKey: API_KEY, configDir: join(list.dir, "ref-config"), home: list.dir });
  const env = soakEnv({ baseUrl: list.chaos.url, apiKey: API_KEY, configDir: join(list.dir, "config"), home: list.dir });
  for (const runEnv of [reference, env]) await smallParts(runEnv, list.dir, o.partSize);
  const referenceRun = await runInProcess(argv(join(list.dir, "reference.csv")), { env: reference, cwd: list.dir });
  list.referenceRun = {
    code: referenceRun.code,
    stderr: referenceRun.stderr,
    bytes: referenceRun.code === 0 ? readFileSync(join(list.dir, "reference.csv")) : undefined,
  };
  for (const afterMs of list.kills) {
    const run = startProcess([...argv(list.output), "--verbose"], { env, cwd: list.dir });
    const exited = await Promise.race([delay(afterMs).then(() => false), run.done.then(() => true)]);
    run.child.kill("SIGKILL");
    const result = await run.done;
    record(list, { ...result, killed: !exited });
  }
  for (let attempt = 0; attempt <= o.reruns; attempt++) {
    const result = await startProcess([...argv(list.output), "--verbose"], { env, cwd: list.dir }).done;
    record(list, { ...result, killed: false });
    if (result.code !== 7 && result.code !== 8) break;
  }
}

/** Keeps a run with what it left at the output; its log stays in the list's directory (see --keep). */
function record(list, run) {
  list.runs.push({ ...run, left: existsSync(list.output) ? readFileSync(list.output) : undefined });
  writeFileSync(join(list.dir, `run-${list.runs.length}.log`), `exit ${run.code}${run.killed ? " (killed)" : ""}\n${run.stderr}`);
}

/** Parts of `partSize` numbers: the profile's task sizes, set as a user would. */
async function smallParts(env, cwd, partSize) {
  for (const [key, value] of [
    ["min-task-size", "1"],
    ["max-task-size", String(partSize)],
  ]) {
    const out = await runInProcess(["config", "set", key, value], { env, cwd });
    if (out.code !== 0) throw new Error(`config set ${key} failed: ${out.stderr}`);
  }
}

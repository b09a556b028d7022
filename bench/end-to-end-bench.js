// End to end against the sandbox: `bulkcheck submit LIST --wait -o OUT` of a list of distinct
// GB mobiles split into 10 tasks, the sandbox processing 20,000 numbers a second with 3
// unfinished tasks at once, against the time the sandbox itself needs for that work.
//
// The ideal schedule (the sandbox's own time, src/sandbox/lifecycle.ts): a task of n numbers
// takes 500 ms + n/20 ms to prepare plus n ÷ numbers-per-second to process; the first
// max-unfinished tasks start at once, and each further task starts the moment one finishes
// (no preparation, upload, hand-off or download). With 10 equal tasks of 100,000 and 3 at once
// that is ceil(10/3) = 4 waves of 10.5 s: 42.0 s. Target: the whole command within 10% of it.
//
// The overhead is split by what the sandbox saw (each task's created_at, its finish from the
// same model): before the first upload (reading and preparing the list: compared with a plain
// `validate` of the same list, target ≤ 1.3×), each hand-off (a task finishing → the next task
// created, the upload included), and after the last task finished (downloads, output, ledger).
//
//   npm run build && node bench/end-to-end-bench.js [numbers=1000000] [ledger|no-ledger|both=both]
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { writeList } from "./download-bench.js";
import { measure } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));
const dist = new URL("../dist/", import.meta.url);
const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
const { idealSchedule } = await import(new URL("tasks/check-simulation.js", dist).href);

const numbers = Number(process.argv[2] ?? 1_000_000);
const which = process.argv[3] ?? "both";
const TASKS = 10;
const MAX_UNFINISHED = 3;
const NUMBERS_PER_SECOND = 20_000;
const taskSize = Math.ceil(numbers / TASKS);
const seconds = (ms) => Number((ms / 1000).toFixed(2));

/** The sandbox's own time for a task of `lines` numbers, all kept (src/sandbox/lifecycle.ts). */
const taskMs = (lines) => 500 + Math.ceil((lines * 1000) / 20_000) + Math.ceil((lines * 1000) / NUMBERS_PER_SECOND);

async function cli(args, env) {
  const run = await measure(process.execPath, [BIN, ...args], { env });
  if (run.code !== 0) throw new Error(`bulkcheck ${args.join(" ")} failed (${run.code}): ${run.stderr.slice(-800)}`);
  return run;
}

async function submitOnce(dir, list, ledger) {
  const sandbox = await startSandbox({
    numbersPerSecond: NUMBERS_PER_SECOND,
    maxTaskSize: taskSize,
    maxUnfinished: MAX_UNFINISHED,
    maxFileBytes: 100_000_000,
    balanceMicros: 1e13,
  });
  try {
    const env = {
      ...process.env,
      BULKCHECK_CONFIG_DIR: join(dir, `config-${ledger}`),
      BULKCHECK_BASE_URL: sandbox.url,
      BULKCHECK_API_KEY: sandbox.apiKey,
    };
    await cli(["config", "set", "max-task-size", String(taskSize)], env);
    const output = join(dir, `out-${ledger}.csv`);
    const startedAt = Date.now();
    const t0 = performance.now();
    await cli(
      [
        "submit",
        list,
        "--type",
        "carrier_batch",
        "--country",
        "GB",
        "--wait",
        "-y",
        "-o",
        output,
        ...(ledger ? [] : ["--no-ledger"]),
        ...(process.env.BENCH_SUBMIT_ARGS?.split(" ") ?? []),
      ],
      env,
    );
    const wallMs = performance.now() - t0;
    const tasks = sandbox
      .inspect()
      .tasks.map((task) => {
        const created = Date.parse(task.created_at) - startedAt;
        return { created, finished: created + taskMs(task.submitted_lines ?? task.total), lines: task.submitted_lines ?? task.total };
      })
      .sort((a, b) => a.created - b.created);
    if (tasks.length !== TASKS) throw new Error(`expected ${TASKS} tasks, the sandbox has ${tasks.length}`);
    // The k-th upload past the first max-unfinished waits for the (k - max-unfinished)-th task to finish.
    const finishes = tasks.map((task) => task.finished).sort((a, b) => a - b);
    const handOffs = tasks.slice(MAX_UNFINISHED).map((task, k) => task.created - finishes[k]);
    const idealMs = idealSchedule(
      tasks.map((task) => taskMs(task.lines)),
      MAX_UNFINISHED,
      0,
    );
    return {
      wall_s: seconds(wallMs),
      ideal_s: seconds(idealMs),
      ratio: Number((wallMs / idealMs).toFixed(3)),
      before_first_upload_s: seconds(tasks[0].created),
      hand_offs_s: handOffs.map(seconds),
      hand_offs_total_s: seconds(handOffs.reduce((sum, ms) => sum + ms, 0)),
      after_last_finish_s: seconds(wallMs - finishes.at(-1)),
    };
  } finally {
    await sandbox.close();
  }
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-e2e-bench-"));
  try {
    const list = join(dir, "list.txt");
    writeList(list, numbers, { shuffled: true });
    const validate = await cli(["validate", list, "--country", "GB"], {
      ...process.env,
      BULKCHECK_CONFIG_DIR: join(dir, "config-validate"),
    });
    const result = {
      numbers,
      tasks: TASKS,
      task_size: taskSize,
      max_unfinished: MAX_UNFINISHED,
      numbers_per_second: NUMBERS_PER_SECOND,
      model:
        "ceil(tasks / max-unfinished) waves; a task takes 500 ms + n/20 ms + n / numbers-per-second; each upload starts the moment a place frees",
      validate_s: seconds(validate.wallMs),
      cpus: availableParallelism(),
      loadavg_1m_before: loadavg()[0],
    };
    for (const ledger of which === "both" ? [true, false] : [which === "ledger"]) {
      const figures = await submitOnce(dir, list, ledger);
      result[ledger ? "ledger" : "no_ledger"] = {
        ...figures,
        before_first_upload_vs_validate: Number((figures.before_first_upload_s / result.validate_s).toFixed(2)),
      };
    }
    result.loadavg_1m_after = loadavg()[0];
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await run(), null, 2));

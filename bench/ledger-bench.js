// The ledger (issue 19), measured in one run of each:
// - recording: `bulkcheck download ID -o FILE` of a 1,000,000-row carrier result with the ledger on
//   (every row recorded) against the same download with --no-ledger (same sandbox, same task), for a
//   list in number order and for one in a list's own (shuffled) order. Target (issue 29): ≤ 2× the
//   time, peak RSS ≤ 250 MB, and no stall of the CLI's event loop over 50 ms: `max_loop_delay_ms` is
//   the largest delay `perf_hooks.monitorEventLoopDelay` (10 ms resolution) saw in the CLI's main
//   thread from the result's response headers to exit, through an --import preload that only observes. Recording runs in a
//   worker thread (src/ledger/recording.ts); GNU time's peak RSS counts the whole process.
// - planning with reuse: `bulkcheck submit LIST --dry-run --max-age 7d` of a 1,000,000-number list
//   against a ledger holding 2,000,000 results of that product (1% of the list new), against a
//   plain `bulkcheck validate LIST` of the same list. Target: ≤ 3× validate, peak RSS ≤ 400 MB, and
//   exactly the new numbers planned for upload. The same command run for real (`--yes`, against a
//   sandbox): the time from its start to its upload reaching the service, its claim on the new
//   numbers included, against validate.
// - size: bytes per stored result (the database file's growth over the rows recorded), for a signal
//   product and for carrier_batch. Target: ≤ 120 and ≤ 250 bytes.
// - the money figure: the nightly re-check of that list with --max-age 7d, where 1% is new, the
//   results of 5% are older than 7 days and 2% got no result (fresh): the plan uploads exactly the
//   new and the expired numbers, and pays for no padding.
//
// - output from the ledger: `bulkcheck submit LIST --wait -o OUT` of a list whose every number has a
//   fresh result in the ledger (nothing is uploaded: the output is written from the ledger), less the
//   same command's --dry-run (its planning), against `bulkcheck download ID -o OUT --no-ledger` of a
//   result with as many rows (the same rows written fresh). Target: ≤ 1.5×.
//
// - the claim (issue 34): what claiming the numbers of a plan of 1,000,000 new numbers adds to the
//   run before its upload, against planning them (`submit --dry-run`). Target: ≤ 20%.
//
//   npm run build && node bench/ledger-bench.js [rows] [recording|planning|claim|output]   (default: all four)
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { sandboxOptions, submitAndWait, writeList } from "./download-bench.js";
import { measure, medianRun } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));
const dist = new URL("../dist/", import.meta.url);
const SCOPE_PROFILE = "default";
const seconds = (ms) => Number((ms / 1000).toFixed(2));

function env(dir, sandbox) {
  return {
    ...process.env,
    BULKCHECK_CONFIG_DIR: join(dir, "config"),
    ...(sandbox ? { BULKCHECK_BASE_URL: sandbox.url, BULKCHECK_API_KEY: sandbox.apiKey } : {}),
  };
}

/**
 * Loaded into the CLI with --import: the largest event-loop delay of its main thread during the
 * download (from the result's response headers to exit; loading the CLI before that is start-up),
 * written at exit.
 */
const LOOP_DELAY_PRELOAD = `
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
const histogram = monitorEventLoopDelay({ resolution: 10 });
subscribe("undici:request:headers", ({ request }) => {
  if (String(request.path).includes("/results/")) histogram.enable();
});
process.on("exit", () => writeFileSync(process.env.BENCH_LOOP_FILE, String(histogram.max / 1e6)));
`;

/** A CLI run with the largest event-loop delay of its main thread (see LOOP_DELAY_PRELOAD). */
async function observedCli(dir, args, environment) {
  const preload = join(dir, "loop-delay.mjs");
  writeFileSync(preload, LOOP_DELAY_PRELOAD);
  const loopFile = join(dir, "loop-delay.txt");
  const run = await cli(args, {
    ...environment,
    BENCH_LOOP_FILE: loopFile,
    NODE_OPTIONS: `${environment.NODE_OPTIONS ?? ""} --import ${pathToFileURL(preload).href}`,
  });
  return { ...run, maxLoopDelayMs: Math.round(Number(readFileSync(loopFile, "utf8"))) };
}

async function cli(args, environment) {
  const run = await measure(process.execPath, [BIN, ...args], { env: environment });
  if (run.code !== 0) throw new Error(`bulkcheck ${args.join(" ")} failed (${run.code}): ${run.stderr.slice(0, 500)}`);
  return run;
}

/** Download with and without the ledger, alternately, and the ledger file's growth per row. */
async function recording(rows) {
  const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-ledger-bench-"));
  const result = {};
  try {
    for (const { product, shuffled } of [
      { product: "carrier_batch", shuffled: false },
      { product: "carrier_batch", shuffled: true },
      { product: "number_activity_batch", shuffled: true },
    ]) {
      const name = `${product}${shuffled ? "_shuffled" : ""}`;
      const list = join(dir, `${name}.txt`);
      writeList(list, rows, { shuffled });
      const sandbox = await startSandbox(sandboxOptions(list, rows));
      try {
        const task = await submitAndWait(sandbox, product, list);
        const home = env(join(dir, name), sandbox);
        // The sandbox makes a result file on first request: a download first, so neither timed one pays for it.
        await cli(["download", task.id, "-o", join(dir, `${name}-warm.csv`), "--no-ledger"], home);
        const off = await observedCli(dir, ["download", task.id, "-o", join(dir, `${name}-off.csv`), "--no-ledger"], home);
        const on = await observedCli(dir, ["download", task.id, "-o", join(dir, `${name}-on.csv`)], home);
        const identical = readFileSync(join(dir, `${name}-on.csv`)).equals(readFileSync(join(dir, `${name}-off.csv`)));
        const bytes = statSync(join(dir, name, "config", "bulkcheck.db")).size;
        result[name] = {
          no_ledger: { wall_s: seconds(off.wallMs), peak_rss_mb: off.peakRssMb, max_loop_delay_ms: off.maxLoopDelayMs },
          ledger: { wall_s: seconds(on.wallMs), peak_rss_mb: on.peakRssMb, max_loop_delay_ms: on.maxLoopDelayMs },
          ratio: Number((on.wallMs / off.wallMs).toFixed(2)),
          outputs_identical: identical,
          database_bytes: bytes,
          bytes_per_result: Math.round(bytes / rows),
        };
      } finally {
        await sandbox.close();
      }
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A ledger of `stored` activity results (numbers 0 … stored-1), the first `expired` of them
 * checked 8 days ago and the rest an hour ago, written through the store's own interface.
 */
/**
 * A ledger of `stored` numbers: the first `expired` checked 8 days ago, the rest an hour ago, of
 * which `withoutResult` (right after the expired ones) the service answered without a result. Each
 * task's numbers are kept, as a run keeps them before its upload.
 */
async function seedLedger(dir, baseUrl, stored, expired, withoutResult = 0) {
  const { SqliteStore } = await import(new URL("store/sqlite-store.js", dist).href);
  const { ResultCollection } = await import(new URL("store/result-collection.js", dist).href);
  const store = SqliteStore.open(join(dir, "config", "bulkcheck.db"));
  const scope = { baseUrl, profile: SCOPE_PROFILE };
  const now = Date.now();
  const batches = [
    { from: 0, to: expired, at: new Date(now - 8 * 86_400_000).toISOString() },
    { from: expired, to: stored, at: new Date(now - 3_600_000).toISOString() },
  ];
  for (const [index, batch] of batches.entries()) {
    const task = await store.tasks.add({ scope, taskId: `seed${index}`.padEnd(32, "0"), product: "number_activity_batch", country: "GB" });
    await store.tasks.update(task.ref, { status: "success", checkedAt: batch.at });
    const rows = new ResultCollection(["activated"]);
    const numbers = [];
    for (let i = batch.from; i < batch.to; i++) {
      numbers.push(447_400_000_000 + i);
      if (i < expired || i >= expired + withoutResult) rows.add([String(447_400_000_000 + i), i % 3 ? "true" : "false"]);
    }
    await store.tasks.addNumbers(task.ref, numbers);
    await store.ledger.record(task.ref, rows, batch.at);
  }
  await store.close();
}

/** Planning a list against a ledger of twice its size, against validate; and the nightly money figure. */
async function planning(rows) {
  const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-ledger-plan-"));
  // The claim's figure is a real submit's: its new numbers claimed, then uploaded to a sandbox.
  const sandbox = await startSandbox({ maxTaskSize: rows, maxFileBytes: 100_000_000, numbersPerSecond: 1_000_000, balanceMicros: 1e13 });
  const baseUrl = sandbox.url.replace(/\/$/, "");
  try {
    const list = join(dir, "list.txt");
    // The list: the ledger's numbers rows/100 … rows-1 (fresh) and rows/100 new ones past the ledger's end.
    const stored = 2 * rows;
    const lines = [];
    for (let i = rows / 100; i < rows; i++) lines.push(String(447_400_000_000 + i));
    for (let i = 0; i < rows / 100; i++) lines.push(String(447_400_000_000 + stored + i));
    writeFileSync(list, `${lines.join("\n")}\n`);
    const expired = rows / 20;
    await seedLedger(dir, baseUrl, stored, 0);
    const environment = env(dir, sandbox);
    await cli(["config", "set", "max-task-size", String(rows)], environment);
    const validate = await cli(["validate", list, "--country", "GB", "--json"], environment);
    const submit = ["submit", list, "--type", "number_activity_batch", "--country", "GB", "--max-age", "7d"];
    const plan = await cli([...submit, "--dry-run", "--json"], environment);
    const planned = JSON.parse(plan.stdout);
    // Planned again and claimed: the time from the command's start to its upload reaching the service.
    const startedAt = Date.now();
    const claimed = await cli([...submit, "--yes"], environment);
    const [task] = sandbox.inspect().tasks;
    const beforeUploadMs = Date.parse(task.created_at) - startedAt;
    // The money figure: the same list against a ledger whose first 5% of the list's numbers expired, and 2% got no result.
    rmSync(join(dir, "config", "bulkcheck.db"));
    const withoutResult = rows / 50;
    await seedLedger(dir, baseUrl, stored, rows / 100 + expired, withoutResult);
    const nightly = JSON.parse(
      (
        await cli(
          ["submit", list, "--type", "number_activity_batch", "--country", "GB", "--dry-run", "--json", "--max-age", "7d"],
          environment,
        )
      ).stdout,
    );
    return {
      list: rows,
      ledger_results: stored,
      validate: { wall_s: seconds(validate.wallMs), peak_rss_mb: validate.peakRssMb },
      plan_with_reuse: {
        wall_s: seconds(plan.wallMs),
        peak_rss_mb: plan.peakRssMb,
        uploaded: planned.numbers,
        reused: planned.reuse.reused,
      },
      ratio: Number((plan.wallMs / validate.wallMs).toFixed(2)),
      plan_and_claim: {
        before_upload_s: seconds(beforeUploadMs),
        wall_s: seconds(claimed.wallMs),
        claimed: task.submitted_lines,
        ratio: Number((beforeUploadMs / validate.wallMs).toFixed(2)),
      },
      new_numbers: rows / 100,
      nightly: {
        new: rows / 100,
        expired,
        without_result: withoutResult,
        uploaded: nightly.numbers,
        reused: nightly.reuse.reused,
        no_result: nightly.reuse.no_result,
        padded: nightly.reuse.padded.numbers,
        exact: nightly.numbers === rows / 100 + expired && nightly.reuse.padded.numbers === 0 && nightly.reuse.no_result === withoutResult,
      },
    };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The claim of a plan of `rows` new numbers (an empty ledger, one task): the run's claim writes
 * every number as its task's. Each `submit --yes` is timed from its start to its upload reaching
 * the sandbox, with the ledger (its claim holds the numbers) and with --no-ledger (its claim
 * holds only the part): the difference is what claiming the numbers adds, against planning
 * (`--dry-run`). Medians of five, each real run on an empty store (else the next would find the
 * numbers in flight).
 */
async function claim(rows) {
  const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-ledger-claim-"));
  const list = join(dir, "list.txt");
  writeList(list, rows, { shuffled: true });
  // Each run against a sandbox of its own, so that no earlier task is still processing there.
  const withSandbox = async (work) => {
    const sandbox = await startSandbox(sandboxOptions(list, rows));
    try {
      return await work(sandbox, env(dir, sandbox));
    } finally {
      await sandbox.close();
    }
  };
  try {
    await cli(["config", "set", "max-task-size", String(rows)], env(dir));
    const submit = ["submit", list, "--type", "number_activity_batch", "--country", "GB", "--yes"];
    const planning = await medianRun(5, () => withSandbox((_, home) => cli([...submit, "--dry-run"], home)));
    const untilUpload = (extra) =>
      medianRun(5, () =>
        withSandbox(async (sandbox, home) => {
          rmSync(join(dir, "config", "bulkcheck.db"), { force: true });
          const startedAt = Date.now();
          const run = await cli([...submit, ...extra], home);
          return { ...run, wallMs: Date.parse(sandbox.inspect().tasks[0].created_at) - startedAt };
        }),
      );
    const claimed = await untilUpload([]);
    const partsOnly = await untilUpload(["--no-ledger"]);
    const claimMs = claimed.wallMs - partsOnly.wallMs;
    return {
      numbers: rows,
      planning_s: seconds(planning.wallMs),
      until_upload_s: seconds(claimed.wallMs),
      until_upload_without_ledger_s: seconds(partsOnly.wallMs),
      claim_of_numbers_s: seconds(claimMs),
      added_to_planning: Number((claimMs / planning.wallMs).toFixed(2)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The output of a run written from the ledger against the same rows downloaded fresh. */
async function output(rows) {
  const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-ledger-output-"));
  try {
    const list = join(dir, "list.txt");
    writeList(list, rows);
    const sandbox = await startSandbox(sandboxOptions(list, rows));
    try {
      const home = env(dir, sandbox);
      const task = await submitAndWait(sandbox, "number_activity_batch", list);
      // The sandbox makes a result file on first request: a download first, so the timed one does not pay for it.
      await cli(["download", task.id, "-o", join(dir, "warm.csv"), "--no-ledger"], home);
      // Each the median of three: the output's time is a difference of two commands' times.
      const fresh = await medianRun(3, () => cli(["download", task.id, "-o", join(dir, "fresh.csv"), "--no-ledger", "--force"], home));
      await seedLedger(dir, sandbox.url, rows, 0);
      const submit = ["submit", list, "--type", "number_activity_batch", "--country", "GB", "-y", "--max-age", "7d"];
      const planning = await medianRun(3, () => cli([...submit, "--dry-run"], home));
      const whole = await medianRun(3, () => cli([...submit, "--wait", "-o", join(dir, "reused.csv"), "--force"], home));
      const fromLedger = whole.wallMs - planning.wallMs;
      return {
        rows,
        fresh_download_s: seconds(fresh.wallMs),
        reused_run_s: seconds(whole.wallMs),
        reused_planning_s: seconds(planning.wallMs),
        reused_output_s: seconds(fromLedger),
        reused_peak_rss_mb: whole.peakRssMb,
        ratio: Number((fromLedger / fresh.wallMs).toFixed(2)),
      };
    } finally {
      await sandbox.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run({ rows = 1_000_000, parts = ["recording", "planning", "claim", "output"] } = {}) {
  return {
    name: "ledger",
    node: process.version,
    machine: { cpus: availableParallelism(), model: cpus()[0]?.model, load_average_at_end: loadavg().map((n) => Number(n.toFixed(1))) },
    ...(parts.includes("recording") ? { recording: await recording(rows) } : {}),
    ...(parts.includes("planning") ? { planning: await planning(rows) } : {}),
    ...(parts.includes("claim") ? { claim: await claim(rows) } : {}),
    ...(parts.includes("output") ? { output: await output(rows) } : {}),
    command: `node bench/ledger-bench.js ${rows}${parts.length === 1 ? ` ${parts[0]}` : ""}`,
    target: {
      output_ratio: 1.5,
      recording_ratio: 2,
      recording_rss_mb: 250,
      recording_max_loop_delay_ms: 50,
      planning_ratio: 3,
      planning_rss_mb: 400,
      claim_added_to_planning: 0.2,
      signal_bytes: 120,
      carrier_bytes: 250,
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const parts = process.argv[3] ? [process.argv[3]] : undefined;
  console.log(JSON.stringify(await run({ rows, ...(parts ? { parts } : {}) }), null, 2));
}

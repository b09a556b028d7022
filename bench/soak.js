#!/usr/bin/env node
// Fault-injection soak, three scenarios (see SCENARIOS):
// - classic: the full flow (submit → wait → download) many times, as real bulkcheck
//   processes, against sandboxes answering 30% of requests with a fault. Afterwards the
//   sandboxes' own task lists and ledgers, and the files the flows wrote, must show no
//   duplicate task, the exact balance, and outputs byte-identical to a fault-free run.
// - big-list: lists of many parts through a quota of unfinished tasks under the same
//   faults, killed at random moments and run again (bench/soak-big-list.js).
// - drip: every command against a server that drips its answers, bounded by --timeout
//   (bench/soak-drip.js).
//
//   npm run soak -- [--scenarios classic,big-list,drip] [--flows 200] [--parallel 4]
//                   [--seeds 10] [--first-seed 1] [--chaos 0.3] [--reruns 4]
//                   [--big-lists 20] [--drip-runs 24] [--drip-timeout 3] [--json]
//
// Needs `npm run build` (the flows run bin/bulkcheck.js, which imports dist/).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { runBigListSoak } from "./soak-big-list.js";
import { formatBigListFigures } from "./soak-big-list-checks.js";
import { checkSoak, formatFigures } from "./soak-checks.js";
import { formatDripFigures, runDripSoak } from "./soak-drip.js";
import { pool, runInProcess, runProcess, settledState, SOAK_FAULTS, soakEnv, soakNumbers } from "./soak-process.js";

export { SOAK_FAULTS };
const PRODUCTS = ["number_validation_batch", "number_activity_batch", "carrier_batch"];
const API_KEY = "sk_soak_0123456789abcdef01234567";

/**
 * Runs the soak and returns `{ ok, failures, figures, wallMs }`. Options (all optional):
 * flows (200), parallel (4), seeds (flows / 20), firstSeed (1), chaos (0.3),
 * faults (SOAK_FAULTS), reruns (4: how many times a flow that exited 7 is run
 * again, as the next cron run would), repeatEvery (5: every n-th flow re-runs an
 * earlier list to exercise idempotency), minSize (500: numbers in the smallest
 * list), log (progress lines), keep (keep the work directory).
 */
export async function runSoak(options = {}) {
  const started = Date.now();
  const o = {
    flows: 200,
    parallel: 4,
    firstSeed: 1,
    chaos: 0.3,
    faults: SOAK_FAULTS,
    reruns: 4,
    repeatEvery: 5,
    minSize: 500,
    log: () => undefined,
    keep: false,
    ...options,
  };
  const seedCount = Math.max(1, Math.min(o.seeds ?? Math.round(o.flows / 20), o.flows));
  const { startSandbox } = await import("../dist/sandbox/index.js");
  const work = mkdtempSync(join(tmpdir(), "bulkcheck-soak-"));
  const seeds = [];
  try {
    for (let s = 0; s < seedCount; s++) {
      const seed = o.firstSeed + s;
      // Same seed on both: results are fixed by (seed, product, identifier), so the
      // fault-free sandbox gives the bytes every chaos flow must reproduce.
      const common = { apiKey: API_KEY, seed, balanceMicros: 1_000_000_000, retryAfterSeconds: 1 };
      const chaos = await startSandbox({ ...common, chaos: o.chaos, chaosFaults: o.faults });
      const reference = await startSandbox(common);
      const dir = join(work, `seed-${seed}`);
      for (const sub of ["lists", "out", "ref", "config", "ref-config", "home"]) mkdirSync(join(dir, sub), { recursive: true });
      seeds.push({ seed, chaos, reference, dir, lists: [] });
    }

    const { lists, flows } = planFlows(o, seeds);
    o.log(
      `soak: ${flows.length} flows over ${lists.length} lists on seeds ${seeds.map((s) => s.seed).join(", ")}, ${o.parallel} at a time`,
    );

    // Fault-free reference runs, in-process (the same CLI code, without paying for process start-up).
    // They mostly wait for the task to finish, so many run at once.
    await pool(
      lists.map((list) => async () => {
        const at = seeds.find((s) => s.seed === list.seed);
        const output = join(at.dir, "ref", `${list.name}.csv`);
        const result = await runInProcess(flowArgs(list, output, false), {
          env: envFor(at.reference.url, join(at.dir, "ref-config"), at.dir),
          cwd: at.dir,
        });
        list.reference = { code: result.code, stderr: result.stderr, bytes: result.code === 0 ? readFileSync(output) : undefined };
      }),
      8,
    );
    o.log(`soak: ${lists.length} fault-free reference runs done`);

    let done = 0;
    await pool(
      flows.map((flow) => async () => {
        const at = seeds.find((s) => s.seed === flow.list.seed);
        const env = envFor(at.chaos.url, join(at.dir, "config"), at.dir);
        for (let attempt = 0; attempt <= o.reruns; attempt++) {
          const run = await runProcess(flowArgs(flow.list, flow.output, true), { env, cwd: at.dir });
          flow.runs.push({ code: run.code, stdout: run.stdout, stderr: run.stderr });
          if (run.code !== 7) break;
        }
        done++;
        if (done % 10 === 0 || done === flows.length) o.log(`soak: ${done}/${flows.length} flows done`);
      }),
      o.parallel,
    );

    const sandboxes = [];
    for (const at of seeds) sandboxes.push({ seed: at.seed, state: await settledState(at.chaos) });
    const journals = seeds.map((at) => ({ seed: at.seed, path: join(at.dir, "config", "bulkcheck.db") }));
    const { failures, figures } = checkSoak({ lists, flows, sandboxes, journals, secret: API_KEY });
    return { ok: failures.length === 0, failures, figures, wallMs: Date.now() - started, work: o.keep ? work : undefined };
  } finally {
    await Promise.all(seeds.flatMap((s) => [s.chaos.close(), s.reference.close()]));
    if (!o.keep) rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Consecutive flows share a seed (its sandbox and its config directory, like one
 * machine), so the flows running at once contend for one journal, one install
 * secret and one account. Most flows get a list of their own; every
 * `repeatEvery`-th flow re-runs an earlier list of its seed, possibly while that
 * list's first flow is still running. Each list on a seed has a distinct line
 * count, which is how its task is found in the sandbox's task list.
 */
function planFlows(o, seeds) {
  const lists = [];
  const flows = [];
  for (let index = 0; index < o.flows; index++) {
    const at = seeds[Math.floor((index * seeds.length) / o.flows)];
    const repeat = (index + 1) % o.repeatEvery === 0 && at.lists.length > 0;
    let list;
    if (repeat) {
      list = at.lists[(index * 7) % at.lists.length];
    } else {
      const k = at.lists.length;
      // Never the minimum itself: a task of that size is a re-check of numbers without a result (see checkSoak).
      const size = o.minSize + 1 + k * 3;
      list = {
        seed: at.seed,
        name: `s${at.seed}-list${k}`,
        product: PRODUCTS[k % PRODUCTS.length],
        size,
        path: join(at.dir, "lists", `list${k}.txt`),
      };
      writeFileSync(list.path, soakNumbers(size, k * 5_000).join("\n") + "\n");
      at.lists.push(list);
      lists.push(list);
    }
    flows.push({ index, list, output: join(at.dir, "out", `flow${index}.csv`), runs: [] });
  }
  return { lists, flows };
}

function flowArgs(list, output, verbose) {
  const args = ["submit", list.path, "--type", list.product, "--country", "GB", "--yes", "--wait", "--interval", "0.2", "-o", output];
  return verbose ? [...args, "--verbose"] : args;
}

function envFor(baseUrl, configDir, dir) {
  return soakEnv({ baseUrl, apiKey: API_KEY, configDir, home: join(dir, "home") });
}

/** The scenarios `npm run soak` runs (all by default; --scenarios picks some). */
const SCENARIOS = {
  classic: {
    title: "full flows (submit --wait -o) under 30% faults",
    run: (o) => runSoak(o),
    format: formatFigures,
  },
  "big-list": {
    title: "big lists through a quota of 3 unfinished tasks under 30% faults, SIGKILLed at random moments",
    run: (o) => runBigListSoak({ ...o, ...(o.bigLists === undefined ? {} : { lists: o.bigLists }) }),
    format: formatBigListFigures,
  },
  drip: {
    title: "a server that drips its answers one byte every 2 s, every command with --timeout",
    run: (o) =>
      runDripSoak({
        ...o,
        ...(o.dripRuns === undefined ? {} : { runs: o.dripRuns }),
        ...(o.dripTimeout === undefined ? {} : { timeout: o.dripTimeout }),
      }),
    format: formatDripFigures,
  },
};

async function cli() {
  if (!existsSync(new URL("../dist/main.js", import.meta.url))) {
    process.stderr.write("soak: dist/ is missing; run `npm run build` first.\n");
    process.exitCode = 2;
    return;
  }
  const text = { type: "string" };
  const { values } = parseArgs({
    options: {
      scenarios: text,
      flows: text,
      parallel: text,
      seeds: text,
      "first-seed": text,
      chaos: text,
      reruns: text,
      "big-lists": text,
      "drip-runs": text,
      "drip-timeout": text,
      json: { type: "boolean" },
      keep: { type: "boolean" },
    },
  });
  const number = (value) => (value === undefined ? undefined : Number(value));
  const options = Object.fromEntries(
    Object.entries({
      flows: number(values.flows),
      parallel: number(values.parallel),
      seeds: number(values.seeds),
      firstSeed: number(values["first-seed"]),
      chaos: number(values.chaos),
      reruns: number(values.reruns),
      bigLists: number(values["big-lists"]),
      dripRuns: number(values["drip-runs"]),
      dripTimeout: number(values["drip-timeout"]),
    }).filter(([, value]) => value !== undefined),
  );
  const names = values.scenarios?.split(",") ?? Object.keys(SCENARIOS);
  const unknown = names.filter((name) => !(name in SCENARIOS));
  if (unknown.length > 0) throw new Error(`soak: unknown scenario ${unknown.join(", ")} (known: ${Object.keys(SCENARIOS).join(", ")})`);
  const log = (line) => process.stderr.write(`${line}\n`);
  const reports = {};
  for (const name of names) {
    const started = Date.now();
    const report = await SCENARIOS[name].run({ ...options, keep: Boolean(values.keep), log });
    reports[name] = { ...report, wallMs: Date.now() - started };
    if (report.work) log(`work directory kept: ${report.work}`);
  }
  const failures = Object.entries(reports).flatMap(([name, report]) => report.failures.map((failure) => `${name}: ${failure}`));
  if (values.json) {
    const json = Object.fromEntries(Object.entries(reports).map(([name, r]) => [name, { ok: r.ok, ...r.figures, wall_ms: r.wallMs }]));
    process.stdout.write(JSON.stringify({ ok: failures.length === 0, ...json, failures }, null, 2) + "\n");
  } else {
    for (const [name, report] of Object.entries(reports)) {
      process.stdout.write(`${SCENARIOS[name].title}\n${SCENARIOS[name].format(report.figures, report.wallMs)}\n\n`);
    }
  }
  for (const failure of failures) process.stderr.write(`FAIL ${failure}\n`);
  process.stderr.write(failures.length === 0 ? "soak: every invariant held\n" : `soak: ${failures.length} invariant(s) failed\n`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await cli();

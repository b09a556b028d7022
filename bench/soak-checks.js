// The soak's invariants, checked from the sandboxes' own state (tasks, ledger,
// stats) and the files the flows wrote, and the figures it prints.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Why a run exited 7, from its stderr. Only these reasons are legitimate: the retry
 * policy ran out (attempts, deadline, or three broken transfers), the service said
 * 50300, which is never retried, or 42900 when none of the list's own tasks was
 * unfinished to wait for. Anything else is "unexplained".
 */
export function exit7Reason(stderr) {
  if (/\(50300\)/.test(stderr)) return "50300 maintenance (never retried)";
  if (/stopped at the limit of \d+ attempts/.test(stderr)) return "retries exhausted (attempt limit)";
  if (/would pass the .* deadline/.test(stderr)) return "retries exhausted (deadline)";
  if (/The download broke off \d+ times/.test(stderr)) return "download broke off on every transfer attempt";
  if (/\(42900\)[\s\S]*carries on where this run stopped/.test(stderr)) return "42900 with none of the list's own tasks unfinished";
  return "unexplained";
}

/** `retry:` lines of --verbose: one per retry the API client made. */
export function countRetries(stderr) {
  return stderr.split("\n").filter((line) => line.startsWith("retry:")).length;
}

/** Restarted downloads and tolerated failed checks while waiting: retries above the client's own. */
export function countRestarts(stderr) {
  const lines = stderr.split("\n");
  return {
    downloads: lines.filter((line) => line.startsWith("The download broke off")).length,
    checks: lines.filter((line) => line.includes("trying again at the next interval")).length,
  };
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/**
 * Whether two outputs of a run hold the same results: the same header and rows, each row's
 * checked_at (last) a time, whatever it is (a run's results are dated by when it saw them;
 * a re-run may take them from the ledger, where rows come by number rather than list order).
 */
export function sameResults(output, reference) {
  const rows = (bytes) => {
    const [header, ...data] = bytes
      .toString("utf8")
      .split("\n")
      .filter((line) => line !== "");
    const dated = header?.endsWith(",checked_at");
    const strip = (line) => (dated ? line.slice(0, line.lastIndexOf(",")) : line);
    if (dated && !data.every((line) => ISO_TIME.test(line.slice(line.lastIndexOf(",") + 1)))) return undefined;
    return [header, ...data.map(strip).sort()].join("\n");
  };
  const mine = rows(output);
  return mine !== undefined && mine === rows(reference);
}

/**
 * Checks every invariant. `lists` carry their reference bytes, `flows` their runs,
 * `sandboxes` the final state of each chaos sandbox. Returns the failures (empty
 * when all hold) and the figures.
 */
export function checkSoak({ lists, flows, sandboxes, journals = [], secret, minTaskSize = 500 }) {
  const failures = [];
  const fail = (text) => failures.push(text);

  // The API key never shows in any output (every run logged with --verbose) or journal.
  let keyLeaks = 0;
  if (secret) {
    for (const flow of flows) {
      for (const run of flow.runs) {
        if ((run.stdout + run.stderr).includes(secret)) {
          keyLeaks++;
          fail(`flow ${flow.index} printed the API key`);
        }
      }
    }
  }
  // The stores shared by concurrent flows never hold the key.
  for (const { seed, path } of journals) {
    if (secret && existsSync(path) && readFileSync(path).includes(secret)) {
      keyLeaks++;
      fail(`seed ${seed}: the store holds the API key`);
    }
  }

  // Exit codes: 0 or 7, and every 7 for a legitimate reason.
  const exitCodes = {};
  const finalCodes = {};
  const exit7 = {};
  let retries = 0;
  const restarts = { downloads: 0, checks: 0 };
  for (const flow of flows) {
    for (const run of flow.runs) {
      exitCodes[run.code] = (exitCodes[run.code] ?? 0) + 1;
      retries += countRetries(run.stderr);
      const restarted = countRestarts(run.stderr);
      restarts.downloads += restarted.downloads;
      restarts.checks += restarted.checks;
      if (run.code === 7) {
        const reason = exit7Reason(run.stderr);
        exit7[reason] = (exit7[reason] ?? 0) + 1;
        if (reason === "unexplained") fail(`flow ${flow.index} exited 7 for an unexplained reason: ${lastLines(run.stderr)}`);
      } else if (run.code !== 0) {
        // Its error line and what follows it (an unexpected error's first frame), not only the end of its stack.
        fail(`flow ${flow.index} (${flow.list.name}) exited ${run.code}: ${endOf(run.stderr)}`);
      }
    }
    const last = flow.runs.at(-1);
    finalCodes[last.code] = (finalCodes[last.code] ?? 0) + 1;
  }

  // The reference runs themselves must have worked, or nothing can be compared.
  for (const list of lists) {
    if (list.reference?.code !== 0)
      fail(`the fault-free reference run of ${list.name} exited ${list.reference?.code}: ${lastLines(list.reference?.stderr ?? "")}`);
  }

  // One task per distinct list: tasks are matched to lists by product and line count (unique per sandbox).
  let duplicates = 0;
  let strayTasks = 0;
  for (const sandbox of sandboxes) {
    const bySignature = new Map();
    for (const task of sandbox.state.tasks) {
      const signature = `${task.product}/${task.submitted_lines}`;
      bySignature.set(signature, [...(bySignature.get(signature) ?? []), task]);
    }
    const seedLists = lists.filter((list) => list.seed === sandbox.seed);
    const known = new Set(seedLists.map((list) => `${list.product}/${list.size}`));
    // A list run again once its run finished is served from the ledger, except its numbers that got no
    // result: those are checked again, in a task filled up to the minimum size with the oldest fresh numbers.
    const repeated = new Set(
      flows
        .filter((flow) => flow.list.seed === sandbox.seed && flows.some((other) => other.list === flow.list && other.index < flow.index))
        .map((flow) => flow.list.product),
    );
    for (const [signature, tasks] of bySignature) {
      const [product, lines] = signature.split("/");
      if (!known.has(signature) && Number(lines) === minTaskSize && repeated.has(product)) continue;
      if (!known.has(signature)) {
        strayTasks += tasks.length;
        fail(`seed ${sandbox.seed}: ${tasks.length} task(s) ${signature} match no list`);
      } else if (tasks.length > 1) {
        duplicates += tasks.length - 1;
        fail(`seed ${sandbox.seed}: ${tasks.length} tasks for one list (${signature}): ${tasks.map((task) => task.id).join(", ")}`);
      }
    }
    for (const list of seedLists) {
      const tasks = bySignature.get(`${list.product}/${list.size}`) ?? [];
      for (const flow of flows.filter((candidate) => candidate.list === list)) {
        const printed = flow.runs.map((run) => run.stdout.trim()).filter((id) => id !== "");
        for (const id of printed) {
          if (!tasks.some((task) => task.id === id))
            fail(`flow ${flow.index} printed task ${id}, which the sandbox does not hold for ${list.name}`);
        }
        if (flow.runs.at(-1).code === 0 && tasks.length === 0)
          fail(`flow ${flow.index} succeeded but the sandbox holds no task for ${list.name}`);
      }
    }
    const reserves = sandbox.state.ledger.filter((entry) => entry.kind === "reserve").length;
    if (reserves !== sandbox.state.tasks.length)
      fail(`seed ${sandbox.seed}: ${reserves} reservations for ${sandbox.state.tasks.length} tasks`);
  }

  // Balance: start − Σ success_cnt × price, with nothing left reserved.
  for (const { seed, state } of sandboxes) {
    const unfinished = state.tasks.filter((task) => task.status === "processing");
    if (unfinished.length > 0) fail(`seed ${seed}: ${unfinished.length} task(s) still processing at the end`);
    const charged = state.tasks.reduce((sum, task) => sum + (task.success_cnt ?? 0) * state.prices[task.product], 0);
    const expected = state.start_balance_micros - charged;
    if (state.balance_micros !== expected)
      fail(
        `seed ${seed}: balance ${state.balance_micros} micros, expected ${expected} (start ${state.start_balance_micros} − charges ${charged})`,
      );
    if (state.reserved_micros !== 0) fail(`seed ${seed}: ${state.reserved_micros} micros still reserved`);
  }

  // Outputs: complete and byte-identical to the reference; absent when the flow never succeeded.
  let corrupt = 0;
  let missing = 0;
  for (const flow of flows) {
    const succeeded = flow.runs.at(-1).code === 0;
    const present = existsSync(flow.output);
    if (succeeded && !present) {
      missing++;
      fail(`flow ${flow.index} exited 0 but wrote no ${flow.output}`);
    } else if (!succeeded && present) {
      corrupt++;
      fail(`flow ${flow.index} never succeeded but ${flow.output} exists`);
    } else if (succeeded && flow.list.reference?.bytes && !sameResults(readFileSync(flow.output), flow.list.reference.bytes)) {
      corrupt++;
      fail(`flow ${flow.index}: ${flow.output} differs from the fault-free run of ${flow.list.name}`);
    }
  }
  const outputDirs = new Set(flows.map((flow) => dirname(flow.output)));
  const tempFiles = [...outputDirs].flatMap((dir) => readdirSync(dir).filter((name) => name.endsWith(".tmp")));
  if (tempFiles.length > 0) fail(`temp files left next to the outputs: ${tempFiles.join(", ")}`);

  const faults = {};
  for (const { state } of sandboxes) {
    for (const [kind, count] of Object.entries(state.stats.faults_injected)) faults[kind] = (faults[kind] ?? 0) + count;
  }
  return {
    failures,
    figures: {
      flows: flows.length,
      runs: flows.reduce((sum, flow) => sum + flow.runs.length, 0),
      lists: lists.length,
      seeds: sandboxes.map((sandbox) => sandbox.seed),
      tasks: sandboxes.reduce((sum, sandbox) => sum + sandbox.state.tasks.length, 0),
      faults,
      faults_total: Object.values(faults).reduce((sum, count) => sum + count, 0),
      retries,
      download_restarts: restarts.downloads,
      tolerated_failed_checks: restarts.checks,
      duplicates,
      key_leaks: keyLeaks,
      stray_tasks: strayTasks,
      corrupt_outputs: corrupt,
      missing_outputs: missing,
      exit_codes: exitCodes,
      final_exit_codes: finalCodes,
      exit7_reasons: exit7,
    },
  };
}

/** The error a run ended with (its "error:" line and the hint after it), else its last lines. */
export function endOf(stderr) {
  const lines = stderr.trim().split("\n");
  const at = lines.findLastIndex((line) => line.startsWith("error: "));
  return at === -1 ? lastLines(stderr) : lines.slice(at, at + 2).join(" | ");
}

export function lastLines(text, count = 3) {
  return text.trim().split("\n").slice(-count).join(" | ");
}

/** Counts as "key: n, key: n", or "none". */
export function histogram(counts) {
  return (
    Object.entries(counts)
      .map(([key, n]) => `${key}: ${n}`)
      .join(", ") || "none"
  );
}

/** [label, value] rows as aligned lines for a terminal. */
export function alignedRows(rows) {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n");
}

/** The figures as aligned lines for a terminal. */
export function formatFigures(figures, wallMs) {
  const rows = [
    [
      "flows",
      `${figures.flows} (${figures.runs} runs incl. cron re-runs after exit 7; ${figures.lists} distinct lists; seeds ${figures.seeds.join(", ")})`,
    ],
    ["tasks created", figures.tasks],
    ["faults injected", `${figures.faults_total} (${histogram(figures.faults)})`],
    ["retries (client)", figures.retries],
    ["download restarts", figures.download_restarts],
    ["tolerated failed checks", figures.tolerated_failed_checks],
    ["duplicates", `${figures.duplicates} (must be 0)`],
    ["stray tasks", `${figures.stray_tasks} (must be 0)`],
    ["API key leaks", `${figures.key_leaks} (must be 0)`],
    ["corrupt outputs", `${figures.corrupt_outputs} (must be 0)`],
    ["missing outputs", `${figures.missing_outputs} (must be 0)`],
    ["exit codes (all runs)", histogram(figures.exit_codes)],
    ["exit codes (final)", histogram(figures.final_exit_codes)],
    ["exit 7 because", histogram(figures.exit7_reasons)],
    ["wall time", `${(wallMs / 1000).toFixed(1)} s`],
  ];
  return alignedRows(rows);
}

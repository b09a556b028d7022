// The big-list scenario's invariants, checked from each list's own sandbox (tasks,
// ledger) against its fault-free twin, and from what every run left at the output.
import { alignedRows, endOf, exit7Reason, histogram, sameResults } from "./soak-checks.js";

/** What a run prints when the service's quota made it wait for its own tasks. */
const QUOTA_WAIT = "(42900): each remaining part waits";

/** Numbers the sandbox charged for: charges over the product's price. */
function numbersCharged(state, product) {
  const micros = state.ledger.filter((entry) => entry.kind === "charge").reduce((sum, entry) => sum + entry.micros, 0);
  return micros / state.prices[product];
}

/**
 * Checks every list: one task per part (no duplicate), each number charged no more
 * than in the fault-free run, every output a run left whole and byte-identical to the
 * fault-free one, no run past its --timeout (+5 s), exit codes 0, 7 or 8 only (a 7 for
 * a legitimate reason), and nothing left staged after success. Returns the failures
 * (empty when all hold) and the figures.
 */
export function checkBigLists({ lists, timeoutSeconds, secret }) {
  const failures = [];
  const fail = (text) => failures.push(text);
  const f = {
    lists: lists.length,
    runs: 0,
    killed_runs: 0,
    tasks: 0,
    parts: 0,
    duplicate_tasks: 0,
    numbers_charged_twice: 0,
    partial_or_corrupt_outputs: 0,
    hung_runs: 0,
    longest_run_s: 0,
    runs_that_waited_for_quota: 0,
    exit_codes: {},
    final_exit_codes: {},
    exit7_reasons: {},
    faults_total: 0,
    staging_left: 0,
  };
  const count = (counts, key) => (counts[key] = (counts[key] ?? 0) + 1);
  for (const list of lists) {
    const reference = list.referenceRun;
    if (reference?.code !== 0) fail(`the fault-free run of ${list.name} exited ${reference?.code}: ${endOf(reference?.stderr ?? "")}`);
    const tasks = list.state.tasks;
    f.tasks += tasks.length;
    f.parts += list.parts;
    f.faults_total += Object.values(list.state.stats.faults_injected).reduce((sum, n) => sum + n, 0);
    if (tasks.length > list.parts) {
      f.duplicate_tasks += tasks.length - list.parts;
      fail(`${list.name}: ${tasks.length} tasks for ${list.parts} parts`);
    }
    const reserves = list.state.ledger.filter((entry) => entry.kind === "reserve").length;
    if (reserves !== tasks.length) fail(`${list.name}: ${reserves} reservations for ${tasks.length} tasks`);
    const twice = numbersCharged(list.state, list.product) - numbersCharged(list.referenceState, list.product);
    if (twice > 0) {
      f.numbers_charged_twice += twice;
      fail(`${list.name}: ${twice} numbers charged more than in the fault-free run`);
    }
    for (const [index, run] of list.runs.entries()) {
      f.runs++;
      if ((run.stdout + run.stderr).includes(secret)) fail(`${list.name} run ${index + 1} printed the API key`);
      if (run.stderr.includes(QUOTA_WAIT)) f.runs_that_waited_for_quota++;
      if (run.left && !(reference?.bytes && sameResults(run.left, reference.bytes))) {
        f.partial_or_corrupt_outputs++;
        fail(`${list.name}: after run ${index + 1}${run.killed ? " (killed)" : ""} the output differs from the fault-free run's`);
      }
      if (run.killed) {
        f.killed_runs++;
        continue;
      }
      f.longest_run_s = Math.max(f.longest_run_s, Math.round(run.wallMs / 100) / 10);
      if (run.wallMs > (timeoutSeconds + 5) * 1000) {
        f.hung_runs++;
        fail(`${list.name} run ${index + 1} took ${Math.round(run.wallMs / 1000)} s, past its --timeout ${timeoutSeconds}`);
      }
      count(f.exit_codes, run.code);
      if (run.code === 7) {
        const reason = exit7Reason(run.stderr);
        count(f.exit7_reasons, reason);
        if (reason === "unexplained") fail(`${list.name} run ${index + 1} exited 7 for an unexplained reason: ${endOf(run.stderr)}`);
      } else if (run.code !== 0 && run.code !== 8) {
        fail(`${list.name} run ${index + 1} exited ${run.code}: ${endOf(run.stderr)}`);
      }
    }
    const last = list.runs.at(-1);
    count(f.final_exit_codes, last.code);
    if (last.code !== 0) fail(`${list.name} never succeeded (last exit ${last.code})`);
    else if (tasks.length < list.parts) fail(`${list.name} succeeded with ${tasks.length} tasks for ${list.parts} parts`);
    else if (!last.left) fail(`${list.name} succeeded but wrote no output`);
    if (last.code === 0 && list.stagingLeft.length > 0) {
      f.staging_left++;
      fail(`${list.name}: staging left behind after success: ${list.stagingLeft.join(", ")}`);
    }
  }
  return { failures, figures: f };
}

/** The figures as aligned lines for a terminal. */
export function formatBigListFigures(f, wallMs) {
  return alignedRows([
    ["lists", `${f.lists} (${f.parts} parts; ${f.runs} runs, ${f.killed_runs} of them SIGKILLed at a random moment)`],
    ["tasks created", f.tasks],
    ["faults injected", f.faults_total],
    ["runs that waited for quota", f.runs_that_waited_for_quota],
    ["duplicate tasks", `${f.duplicate_tasks} (must be 0)`],
    ["numbers charged twice", `${f.numbers_charged_twice} (must be 0)`],
    ["partial/corrupt outputs", `${f.partial_or_corrupt_outputs} (must be 0)`],
    ["runs past --timeout", `${f.hung_runs} (must be 0; longest run ${f.longest_run_s} s)`],
    ["staging left after success", `${f.staging_left} (must be 0)`],
    ["exit codes (runs not killed)", histogram(f.exit_codes)],
    ["exit codes (final)", histogram(f.final_exit_codes)],
    ["exit 7 because", histogram(f.exit7_reasons)],
    ["wall time", `${(wallMs / 1000).toFixed(1)} s`],
  ]);
}

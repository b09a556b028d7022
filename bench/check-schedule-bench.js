// The hand-off against the service's polling floor (one check of a task per 30 s, no progress
// exposed), in the scheduling simulation of src/tasks/check-simulation.ts: for each scenario of
// docs/performance.md, over many runs (the service's pace drawn anew for each), the time from a
// task finishing to the check that sees it (and so to the next part's upload), checking every
// 30 s from the upload ("fixed", what any --interval does) against the CheckPlan the scheduler
// follows at the floor ("planned"). Nothing sleeps: it takes a second.
//   npm run build && node bench/check-schedule-bench.js [runs]   (default 200)
const dist = new URL("../dist/", import.meta.url);
const { CHECK_SCENARIOS, simulateChecks, summarise } = await import(new URL("tasks/check-simulation.js", dist).href);
const { mulberry32 } = await import(new URL("sandbox/random.js", dist).href);

const runs = Number(process.argv[2] ?? 200);
const s = (ms) => Number((ms / 1000).toFixed(1));

function measure(scenario, policy) {
  const first = [];
  const later = [];
  let elapsed = 0;
  let ideal = 0;
  let checks = 0;
  let shortestGapMs = Infinity;
  for (let seed = 1; seed <= runs; seed++) {
    const outcome = simulateChecks({ ...scenario, random: mulberry32(seed) }, policy);
    first.push(...outcome.handOffsMs.slice(0, scenario.maxUnfinished));
    later.push(...outcome.handOffsMs.slice(scenario.maxUnfinished));
    elapsed += outcome.elapsedMs;
    ideal += outcome.idealMs;
    checks += outcome.checks;
    shortestGapMs = Math.min(shortestGapMs, outcome.shortestGapMs);
  }
  const all = summarise([...first, ...later]);
  const after = summarise(later);
  return {
    first_tasks_mean_s: s(summarise(first).mean),
    later_mean_s: s(after.mean),
    later_p95_s: s(after.p95),
    all_mean_s: s(all.mean),
    all_p95_s: s(all.p95),
    run_vs_ideal: Number((elapsed / ideal).toFixed(3)),
    checks_per_run: Math.round(checks / runs),
    shortest_gap_s: s(shortestGapMs),
  };
}

const scenarios = CHECK_SCENARIOS.map((scenario) => ({
  name: scenario.name,
  bound_s: scenario.boundMs === undefined ? null : s(scenario.boundMs),
  fixed: measure(scenario, "fixed"),
  planned: measure(scenario, "planned"),
}));
console.log(JSON.stringify({ runs, scenarios }, null, 2));

import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../src/sandbox/random.js";
import { CheckPlan } from "../../src/tasks/check-schedule.js";
import { CHECK_SCENARIOS, simulateChecks, summarise, type CheckPolicy } from "../../src/tasks/check-simulation.js";

/**
 * Every time here is the simulation's own clock, drawn from fixed seeds (nothing sleeps or reads the
 * wall clock): the bounds are properties of the check plan, the same on a busy machine as on a quiet one.
 */
const FLOOR = 30_000;

/** Every documented scenario, over many seeds: the hand-offs after the first tasks, and the shortest gap between two requests about one task. */
function run(policy: CheckPolicy, scenario: (typeof CHECK_SCENARIOS)[number], seeds = 100) {
  const later: number[] = [];
  let shortestGapMs = Infinity;
  for (let seed = 1; seed <= seeds; seed++) {
    const outcome = simulateChecks({ ...scenario, random: mulberry32(seed) }, policy);
    later.push(...outcome.handOffsMs.slice(scenario.maxUnfinished));
    shortestGapMs = Math.min(shortestGapMs, outcome.shortestGapMs);
  }
  return { later: summarise(later), shortestGapMs };
}

describe("CheckPlan", () => {
  it("checks a task one floor after its upload while nothing is known of the pace", () => {
    const plan = new CheckPlan(FLOOR);
    plan.follow("a", 100_000, 1_000);
    expect(plan.nextCheck("a")).toBe(31_000);
  });

  it("aims a task's checks at its finish foreseen from the tasks finished before, never sooner than a floor apart", () => {
    const plan = new CheckPlan(FLOOR);
    // One task of 100,000 numbers was unfinished 40 s after its upload and finished at 41 s: 0.4–0.41 ms per number.
    plan.follow("first", 100_000, 0);
    plan.checked("first", 40_000, 40_000, false);
    plan.checked("first", 71_000, 71_000, true);
    plan.follow("second", 100_000, 100_000);
    plan.checked("second", 100_000 + 40_000, 100_000 + 40_000, false);
    plan.checked("second", 100_000 + 41_000, 100_000 + 41_000, true);
    plan.follow("next", 50_000, 200_000);
    // Foreseen finish: 200 s + 50,000 × 0.41 ms (+1%) ≈ 220.7 s; the floor forbids a check before 230 s.
    const first = plan.nextCheck("next");
    expect(first).toBeGreaterThanOrEqual(230_000);
    expect(first).toBeLessThan(231_000);
    plan.checked("next", first, first, false);
    expect(plan.nextCheck("next")).toBeGreaterThanOrEqual(first + FLOOR);
  });

  it("checks a task found from an earlier run every floor, its size foretelling nothing", () => {
    const plan = new CheckPlan(FLOOR);
    plan.follow("earlier", undefined, 5_000);
    expect(plan.nextCheck("earlier")).toBe(35_000);
    plan.checked("earlier", 35_000, 35_200, false);
    expect(plan.nextCheck("earlier")).toBeGreaterThanOrEqual(65_200);
  });
});

describe("the check simulation", () => {
  it.each(CHECK_SCENARIOS)("never checks a task twice within 30 s: $name", (scenario) => {
    for (const policy of ["fixed", "planned"] as const) expect(run(policy, scenario, 40).shortestGapMs).toBeGreaterThanOrEqual(FLOOR);
  });

  it.each(CHECK_SCENARIOS.filter((scenario) => scenario.boundMs !== undefined))(
    "sees tasks after the first within the stated bound of their finish on average: $name",
    (scenario) => {
      const planned = run("planned", scenario);
      const fixed = run("fixed", scenario);
      expect(planned.later.mean).toBeLessThan(scenario.boundMs!);
      expect(planned.later.mean).toBeLessThan(fixed.later.mean);
    },
  );
});

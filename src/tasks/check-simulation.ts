import { CheckPlan } from "./check-schedule.js";
import { jittered } from "./wait.js";

/**
 * A run against the service's rules, simulated on a clock of its own (nothing sleeps): the
 * parts of a list are uploaded while the service allows `maxUnfinished` unfinished tasks,
 * each task takes a time proportional to its size, a check answers only "finished or not",
 * and the next part is uploaded as soon as a finished task is seen. It measures what the
 * checks cost a big list: the time from each task finishing to the check that sees it.
 * The tests and `bench/check-schedule-bench.js` run it; docs/performance.md has its figures.
 */
export interface CheckScenario {
  /** The parts' sizes, in upload order. */
  parts: readonly number[];
  /** Unfinished tasks the service allows at once (a further upload is refused with 42900). */
  maxUnfinished: number;
  /** The service's time per number of a task, in ms: the run's own is drawn between these (it is not known beforehand). */
  msPerNumber: readonly [number, number];
  /** Each task's time varies from that by up to this share either way (uniformly). */
  variation: number;
  /** The time an upload takes until its task is answered, in ms. */
  uploadMs: number;
  /** The time a check takes until it is answered, in ms. */
  checkMs: number;
  /** The least time between two checks of one task (the service's 30 s). */
  floorMs: number;
  random: () => number;
}

const repeat = (count: number, size: number): number[] => Array<number>(count).fill(size);
const LINK = { uploadMs: 1_500, checkMs: 200, floorMs: 30_000 } as const;

/**
 * The scenarios of docs/performance.md and of the tests, with the bound each states for the
 * mean hand-off of the tasks after the first `maxUnfinished` (those begin knowing nothing).
 */
export const CHECK_SCENARIOS: ReadonlyArray<Omit<CheckScenario, "random"> & { name: string; boundMs?: number }> = [
  {
    name: "20 parts of 100,000, 3 at once, 25–100 s a task, ±2% from task to task",
    parts: repeat(20, 100_000),
    maxUnfinished: 3,
    msPerNumber: [0.25, 1],
    variation: 0.02,
    ...LINK,
    boundMs: 8_000,
  },
  {
    name: "50 parts of 100,000, 5 at once, 50–200 s a task, ±2%",
    parts: repeat(50, 100_000),
    maxUnfinished: 5,
    msPerNumber: [0.5, 2],
    variation: 0.02,
    ...LINK,
    boundMs: 8_000,
  },
  {
    name: "12 parts of 500,000 and one of 123,000, 3 at once, 50–200 s a task, ±2%",
    parts: [...repeat(12, 500_000), 123_000],
    maxUnfinished: 3,
    msPerNumber: [0.1, 0.4],
    variation: 0.02,
    ...LINK,
    boundMs: 10_000,
  },
  {
    name: "20 parts of 100,000, 3 at once, 25–100 s a task, ±5%",
    parts: repeat(20, 100_000),
    maxUnfinished: 3,
    msPerNumber: [0.25, 1],
    variation: 0.05,
    ...LINK,
    boundMs: 10_000,
  },
  {
    name: "20 parts of 100,000, 3 at once, 25–100 s a task, ±10%",
    parts: repeat(20, 100_000),
    maxUnfinished: 3,
    msPerNumber: [0.25, 1],
    variation: 0.1,
    ...LINK,
  },
  {
    name: "10 parts of 100,000, 3 at once, 5–20 s a task (shorter than the floor), ±2%",
    parts: repeat(10, 100_000),
    maxUnfinished: 3,
    msPerNumber: [0.05, 0.2],
    variation: 0.02,
    ...LINK,
  },
];

/** "fixed": every floor plus up to 10% jitter (the scheduler's --interval). "planned": CheckPlan. */
export type CheckPolicy = "fixed" | "planned";

export interface CheckSimulation {
  /** For each task, the time from its finish to the check that saw it finished, in ms. */
  handOffsMs: number[];
  /** From the first upload to the last task seen finished. */
  elapsedMs: number;
  /** The same with every finished task seen at once (the schedule's ideal). */
  idealMs: number;
  checks: number;
  /** The shortest time between two requests about one task (its upload, then its checks), as sent. */
  shortestGapMs: number;
}

interface SimulatedTask {
  id: string;
  size: number;
  startedAt: number;
  finishesAt: number;
  lastSentAt: number;
  nextCheckAt: number;
}

export function simulateChecks(scenario: CheckScenario, policy: CheckPolicy): CheckSimulation {
  const { parts, maxUnfinished, floorMs, checkMs, uploadMs, random } = scenario;
  const [slowest, fastest] = scenario.msPerNumber;
  const pace = slowest + (fastest - slowest) * random();
  const durations = parts.map((size) => size * pace * (1 + scenario.variation * (2 * random() - 1)));
  const plan = new CheckPlan(floorMs);
  const unfinished: SimulatedTask[] = [];
  const handOffsMs: number[] = [];
  let shortestGapMs = Infinity;
  let checks = 0;
  let next = 0;
  let clock = 0;

  const upload = (at: number) => {
    const index = next++;
    const startedAt = at + uploadMs;
    const task: SimulatedTask = {
      id: `task-${index}`,
      size: parts[index]!,
      startedAt,
      finishesAt: startedAt + durations[index]!,
      lastSentAt: at,
      nextCheckAt: 0,
    };
    plan.follow(task.id, task.size, startedAt);
    task.nextCheckAt = policy === "planned" ? plan.nextCheck(task.id) : startedAt + jittered(floorMs, random);
    unfinished.push(task);
  };

  while (next < Math.min(maxUnfinished, parts.length)) upload(0);
  while (unfinished.length > 0) {
    const task = unfinished.reduce((soonest, candidate) => (candidate.nextCheckAt < soonest.nextCheckAt ? candidate : soonest));
    const sentAt = task.nextCheckAt;
    const answeredAt = sentAt + checkMs;
    shortestGapMs = Math.min(shortestGapMs, sentAt - task.lastSentAt);
    task.lastSentAt = sentAt;
    checks++;
    // The service answers with the state at the moment the check reaches it, halfway.
    const finished = task.finishesAt <= sentAt + checkMs / 2;
    plan.checked(task.id, sentAt, answeredAt, finished);
    clock = answeredAt;
    if (finished) {
      handOffsMs.push(answeredAt - task.finishesAt);
      unfinished.splice(unfinished.indexOf(task), 1);
      if (next < parts.length) upload(answeredAt);
    } else {
      task.nextCheckAt = policy === "planned" ? plan.nextCheck(task.id) : answeredAt + jittered(floorMs, random);
    }
  }
  return { handOffsMs, elapsedMs: clock, idealMs: idealSchedule(durations, maxUnfinished, uploadMs), checks, shortestGapMs };
}

/**
 * The run's length when every finished task is seen at once: each part is uploaded as soon
 * as one of the `maxUnfinished` places frees, and the run ends when the last task finishes.
 */
export function idealSchedule(durations: readonly number[], maxUnfinished: number, uploadMs: number): number {
  const freeAt = Array<number>(Math.min(maxUnfinished, durations.length)).fill(0);
  let end = 0;
  for (const duration of durations) {
    const place = freeAt.indexOf(Math.min(...freeAt));
    freeAt[place] = freeAt[place]! + uploadMs + duration;
    end = Math.max(end, freeAt[place]);
  }
  return end;
}

/** The mean and the 95th percentile of `values`. */
export function summarise(values: readonly number[]): { mean: number; p95: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { mean, p95: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]! };
}

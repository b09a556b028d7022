import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { planRun, type PlanInput, type PlannedRun } from "./plan.js";

const DAY_MS = 86_400_000;

/**
 * The plan with the --max-age (in whole days) that would reuse the results this one left
 * out as too old (`plan.stale`), and what it would reserve: `plan.stale.longerMaxAge`.
 * "Would save" is then the difference between two whole plans, padding, numbers without
 * a result and numbers in flight included: counting only the old results' numbers once
 * promised $0.108 where the longer plan uploaded nothing and saved the whole padded task.
 * The longer plan is made like the run's (same ledger, same tasks in flight), its parts
 * written to a directory of their own under `input.dir` and removed; nothing is stored.
 * Planned only when some results are too old, so a run that reuses everything plans once.
 */
export async function withLongerMaxAge(planned: PlannedRun, input: PlanInput, now: number): Promise<PlannedRun> {
  const { stale } = planned.plan;
  const reuse = input.reuse;
  if (!reuse || !stale?.oldest) return planned;
  // At least a day: results of this very moment are too old only for --max-age 0 (which counts from the command's start).
  const maxAgeMs = Math.max(1, Math.ceil((now - Date.parse(stale.oldest)) / DAY_MS)) * DAY_MS;
  const dir = await mkdtemp(join(input.dir, "longer-max-age-"));
  try {
    const longer = await planRun({
      ...input,
      dir,
      reuse: { ...reuse, rule: { ...reuse.rule, maxAgeMs, freshSince: new Date(now - maxAgeMs).toISOString() } },
    });
    const longerMaxAge = { maxAgeMs, reservationMicros: longer.plan.reservationMicros };
    return { ...planned, plan: { ...planned.plan, stale: { ...stale, longerMaxAge } } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

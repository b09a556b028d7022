import { readAgainOptions } from "../prepare/settings.js";
import { planOf } from "./run-record.js";
import { prepareList, type PrepareResult } from "../prepare/index.js";
import type { RunRecord, Scope, Store } from "../store/store.js";
import { listFingerprint } from "./identity.js";
import { runSettings } from "../tasks/origins.js";
import { planRun, samePlan, type PlannedRun } from "./plan.js";

/** A run's list prepared again from its source, and its parts made again as it planned them. */
export interface RebuiltRun {
  prepared: PrepareResult;
  planned: PlannedRun;
  /** Whether the source still keeps the run's numbers, split into the run's parts: only then are the parts what was uploaded. */
  unchanged: boolean;
}

/**
 * Prepares a finished run's source again with the settings it was read with, and plans
 * its parts again with its journalled rule (the same ledger results, as of the same
 * task reference): for a join with the run's whole output (its tasks' results and the
 * ledger's), and for retry-failed, which needs the numbers a task was given. Undefined for
 * a run without a plan (imported from 0.1) or without its settings.
 */
export async function rebuildRun(
  run: RunRecord,
  source: string,
  deps: { store: Store; scope: Scope; dir: string; signal?: AbortSignal; onPrepared?: (result: PrepareResult) => void },
): Promise<RebuiltRun | undefined> {
  const plan = planOf(run);
  const settings = runSettings(run);
  if (!plan || !settings) return undefined;
  const prepared = await prepareList({
    source,
    ...readAgainOptions(settings),
    ...(settings.anyRegion
      ? { anyRegion: true, countryTasks: { minTaskSize: plan.limits.minTaskSize, maxTaskSize: Number.MAX_SAFE_INTEGER } }
      : {}),
    outputDir: deps.dir,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  deps.onPrepared?.(prepared);
  const planned = await planRun({
    lists: prepared.chunks,
    limits: plan.limits,
    priceMicros: plan.priceMicros,
    dir: deps.dir,
    ...(plan.reuse ? { reuse: { store: deps.store, scope: deps.scope, product: run.product, rule: plan.reuse } } : {}),
  });
  const unchanged = listFingerprint(prepared.chunks) === plan.list && samePlan(plan, planned.plan);
  return { prepared, planned, unchanged };
}

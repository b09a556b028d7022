import type { ApiClient } from "../api/types.js";
import type { ResultRecording } from "../ledger/recording.js";
import { checkResult } from "../results/read-results.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { Scope, Store } from "../store/store.js";
import { recordedAfter, resultLabel } from "../tasks/download.js";
import { resultOpener } from "../tasks/fetch-result.js";
import { intactStagedCopy, stagingRoot } from "./staging.js";
import { noteTaskState } from "./uploads.js";

/** How many of the latest runs are looked through for abandoned ones whose results are still to be kept. */
const RECENT_RUNS = 200;

export interface CollectDeps {
  store: Store;
  /** bulkcheck's state directory, where a killed run's staged results wait (see Staging). */
  stateDir: string;
  scope: Scope;
  client: Pick<ApiClient, "checkTask" | "openResult">;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  now: () => number;
  /** Where results go into the ledger (off this thread). */
  recording: ResultRecording;
}

/**
 * No paid result is lost: the tasks of abandoned runs (whose list changed before they were
 * continued) are checked, and the results of those that have succeeded since are read (to
 * the same rules as any result) into the ledger. A task still running is left for the next
 * time; one the service no longer knows, or that failed, has nothing to keep. A result the
 * run staged before it was abandoned is read from its staged copy while that is intact: it
 * is not downloaded again, and numbers `ledger forget` took out of it stay out (as they do of
 * a result downloaded now: see Ledger.forget), and what forget remembered for runs that have
 * all ended (or been collected) since goes. Returns how many results were recorded.
 */
export async function collectAbandonedRuns(deps: CollectDeps): Promise<number> {
  const { store } = deps;
  let recorded = 0;
  const runs = (await store.runs.list({ scope: deps.scope, limit: RECENT_RUNS })).filter((run) => run.state === "abandoned");
  for (const run of runs) {
    const product = canonicalServiceType(run.product);
    if (!product) continue;
    for (const row of await store.tasks.ofRun(run.id)) {
      if (!row.taskId || row.recordedAt !== undefined || row.status === "failed") continue;
      const task = await deps.client.checkTask(row.taskId).catch(() => undefined);
      if (!task) continue;
      await noteTaskState(store, row.ref, task, deps.now);
      if (task.status !== "success") continue;
      const staged = await intactStagedCopy(stagingRoot(deps.stateDir, true), row.staged);
      await recordTaskResult({ ...deps, product }, row.ref, task, staged);
      recorded++;
    }
  }
  await store.ledger.dropSpentErasures();
  return recorded;
}

/**
 * Reads a succeeded task's result (to the same rules as any result) into the ledger, under
 * the store's reference `ref`: from `staged`, an intact copy a run fetched before, or from the service.
 */
export async function recordTaskResult(
  deps: Pick<CollectDeps, "client" | "sleep" | "signal" | "recording"> & { product: ServiceType },
  ref: number,
  task: Task,
  staged?: string,
): Promise<void> {
  const result = { taskRef: ref, product: deps.product, task, label: resultLabel(task.id) };
  if (staged !== undefined) {
    await deps.recording.recordFile(result, staged);
    return;
  }
  const recorder = await deps.recording.recorder(result);
  const open = resultOpener(task, { client: deps.client, sleep: deps.sleep, signal: deps.signal });
  await recordedAfter(deps, checkResult({ label: result.label, task, open, recorder }, { serviceType: deps.product, signal: deps.signal }));
}

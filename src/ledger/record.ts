import type { ResultRecorder } from "../results/read-results.js";
import { canonicalServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { ErasedIdentifiers, Scope, Store } from "../store/store.js";
import { resultLabel } from "../tasks/download.js";
import type { ResultRecording } from "./recording.js";

/**
 * Recorders for tasks as they are downloaded (`download`, a join, a report): a task the
 * store does not know yet (submitted elsewhere, or before the store) gets its row, dated
 * by this check; a task whose result the ledger already holds is not recorded again. The
 * result is recorded off the download's path (see ResultRecording.recorder).
 */
export function recorderFor(
  store: Store,
  scope: Scope,
  now: () => number,
  recording: ResultRecording,
): (task: Task) => Promise<ResultRecorder | undefined> {
  return async (task) => {
    const product = canonicalServiceType(task.product);
    if (task.status !== "success" || product === undefined) return undefined;
    const known = await store.tasks.byId(scope, task.id);
    const row =
      known ??
      (await store.tasks.add({ scope, taskId: task.id, product: task.product, ...(task.country ? { country: task.country } : {}) }));
    await store.tasks.update(row.ref, {
      status: task.status,
      total: task.total,
      ...(task.success_cnt === undefined ? {} : { successCnt: task.success_cnt }),
      ...(task.failure_cnt === undefined ? {} : { failureCnt: task.failure_cnt }),
      // The first check that saw it succeeded dates its results; a later download does not move them.
      ...(row.checkedAt === undefined ? { checkedAt: new Date(now()).toISOString() } : {}),
    });
    if (known?.recordedAt !== undefined) return undefined;
    return recording.recorder({ taskRef: row.ref, product, task, label: resultLabel(task.id) });
  };
}

/**
 * What a download leaves out of a task's result (`download`, a join, a report, a run's output):
 * the numbers `ledger forget` erased since the store's task was given them, while a run open
 * then could bring them back (see Ledger.erasedSince). A task the store does not know has none.
 */
export function withheldFor(store: Store, scope: Scope): (task: Task) => Promise<ErasedIdentifiers | undefined> {
  return async (task) => {
    const known = await store.tasks.byId(scope, task.id);
    return known && store.ledger.erasedSince(known.ref);
  };
}

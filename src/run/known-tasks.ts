import { ApiError } from "../api/errors.js";
import type { ApiClient } from "../api/types.js";
import { ApiCode } from "../spec/codes.js";
import type { Task } from "../spec/task.js";
import type { TaskRecord } from "../store/store.js";
import type { SubmitRunDeps } from "./submit-request.js";
import { noteTaskState } from "./uploads.js";

/**
 * The tasks this run's parts already have, checked now: a task the service no longer
 * knows (a restarted sandbox, another account's key) is uploaded again, after the same
 * money checks as any upload.
 */
export async function knownTasks(
  client: Pick<ApiClient, "checkTask">,
  rows: readonly TaskRecord[],
  deps: Pick<SubmitRunDeps, "store" | "now">,
): Promise<Map<number, Task>> {
  const known = new Map<number, Task>();
  for (const row of rows) {
    if (!row.taskId) continue;
    try {
      const task = await client.checkTask(row.taskId);
      await noteTaskState(deps.store, row.ref, task, deps.now);
      known.set(row.ref, task);
    } catch (error) {
      if (!(error instanceof ApiError && error.apiCode === ApiCode.UNSUPPORTED_OR_CONFLICT)) throw error;
    }
  }
  return known;
}

import type { Task } from "../spec/task.js";
import type { RunRecord, TaskRecord } from "../store/store.js";
import { scheduleParts } from "../tasks/schedule.js";
import type { PlannedUpload, UploadResult } from "../tasks/submit.js";
import type { PlannedRun } from "./plan.js";
import type { SubmitRequest, SubmitRunDeps } from "./submit-request.js";
import { inUploadSlot, noteTaskState, uploadPart } from "./uploads.js";

/** Uploads what has no task yet and follows the tasks: until every part is uploaded, or with `wait` until every task has finished. */
export async function scheduleRunParts(
  run: RunRecord,
  planned: PlannedRun,
  rows: readonly TaskRecord[],
  known: ReadonlyMap<number, Task>,
  options: SubmitRequest,
  deps: SubmitRunDeps,
): Promise<UploadResult[]> {
  const client = await deps.client();
  const uploads: PlannedUpload[] = planned.files.map((file, index) => {
    const row = rows[index]!;
    const task = known.get(row.ref);
    return {
      ...file,
      index,
      of: planned.files.length,
      idempotencyKey: row.idempotencyKey!,
      ref: row.ref,
      ...(row.submittedAt ? { keyWrittenAt: row.submittedAt } : {}),
      ...(task ? { knownTask: task } : {}),
    };
  });
  const refOfTask = new Map<string, number>();
  for (const row of rows) if (row.taskId) refOfTask.set(row.taskId, row.ref);
  const context = { client, store: deps.store, product: options.product, country: options.country, now: deps.now };
  const waiting = new Map<number, UploadResult>();
  let next = 0;
  return scheduleParts({
    client: {
      // Every check the schedule makes is kept in the store: the first to see a task succeeded dates its results.
      checkTask: async (id) => {
        const task = await client.checkTask(id);
        const ref = refOfTask.get(id);
        if (ref !== undefined) await noteTaskState(deps.store, ref, task, deps.now);
        return task;
      },
    },
    uploads,
    upload: async (upload) => {
      const slot = { ...deps, maxInFlight: deps.limits.maxInFlight };
      const result = await inUploadSlot(slot, upload.ref, () =>
        uploadPart({ ...context, ...(options.command.retryOf ? { retryOf: options.command.retryOf } : {}) }, upload),
      );
      refOfTask.set(result.task.id, upload.ref);
      return result;
    },
    now: deps.now,
    sleep: deps.sleep,
    random: deps.random,
    signal: deps.signal,
    maxInFlight: deps.limits.maxInFlight,
    pollIntervalMs: options.pollIntervalMs,
    untilFinished: options.wait,
    ...(deps.roomWillCome ? { roomWillCome: deps.roomWillCome } : {}),
    ...(options.keepFailedTasks ? { returnFailed: true } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
    resumeCommand: options.resumeCommand,
    waitResumes: deps.onSucceeded === undefined,
    onEvent(event) {
      // Tasks are reported in list order, each as soon as those before it are known.
      if (event.type === "uploaded") {
        waiting.set(event.result.upload.index, event.result);
        for (let ready = waiting.get(next); ready; ready = waiting.get(next)) {
          waiting.delete(next++);
          deps.onEvent({ type: "task", result: ready, runId: run.id });
        }
      }
      deps.onEvent({ type: "schedule", event });
    },
    ...(deps.onSucceeded ? { onSucceeded: (result: UploadResult) => deps.onSucceeded!(result, run) } : {}),
  }).finally(() => {
    // After a failure, still report every task that was created, in list order.
    for (const index of [...waiting.keys()].sort((a, b) => a - b))
      deps.onEvent({ type: "task", result: waiting.get(index)!, runId: run.id });
  });
}

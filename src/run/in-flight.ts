import type { ApiClient } from "../api/types.js";
import type { ResultRecording } from "../ledger/recording.js";
import { TaskFailedError } from "../errors.js";
import type { ServiceType } from "../spec/products.js";
import type { Scope, Store } from "../store/store.js";
import { timedOut, type TimeoutSettings } from "../tasks/schedule-outcomes.js";
import { waitForTasks } from "../tasks/wait.js";
import { recordTaskResult } from "./abandoned.js";
import { tasksOfClaims } from "./claims.js";
import type { InFlightTask } from "./plan.js";
import { noteTaskState } from "./uploads.js";

export interface InFlightDeps {
  store: Store;
  scope: Scope;
  client: Pick<ApiClient, "checkTask" | "openResult">;
  product: ServiceType;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  signal: AbortSignal;
  /** Where results go into the ledger (off this thread). */
  recording: ResultRecording;
}

/**
 * Waits for the tasks in flight whose results a run takes instead of paying for their
 * numbers again (submitted or claimed by another run, on this machine or another sharing
 * the store: a claim first becomes its task, see tasksOfClaims), and makes sure each one's
 * result is in the ledger: recorded by whoever fetched it first, or fetched and recorded
 * here. Returns the tasks, each with its id, and when each was checked, for the output's
 * dates. A task that failed answered nothing: the run cannot write those numbers, and the
 * next run of the command uploads them (exit 6).
 */
export async function followInFlight(
  deps: InFlightDeps,
  inFlight: readonly InFlightTask[],
  options: TimeoutSettings & { pollIntervalMs: number },
): Promise<{ tasks: Array<InFlightTask & { taskId: string }>; checkedAt: Map<number, string> }> {
  const { store, scope } = deps;
  const began = deps.now();
  const tasks = await tasksOfClaims(deps, inFlight, options);
  const timeoutMs = options.timeoutMs === undefined ? undefined : Math.max(0, options.timeoutMs - (deps.now() - began));
  const refOf = new Map(tasks.map((task) => [task.taskId, task.ref]));
  const outcome = await waitForTasks({
    checkTask: async (id) => {
      const task = await deps.client.checkTask(id);
      await noteTaskState(store, refOf.get(id)!, task, deps.now);
      return task;
    },
    ids: tasks.map((task) => task.taskId),
    intervalMs: options.pollIntervalMs,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    now: deps.now,
    sleep: deps.sleep,
    random: deps.random,
    signal: deps.signal,
  });
  const states = [...outcome.tasks.values()];
  const failed = states.filter((task) => task.status === "failed").map((task) => task.id);
  if (failed.length > 0) {
    throw new TaskFailedError(
      `Task(s) ${failed.join(", ")}, submitted by another run with numbers of this list, failed, so those numbers have no result (the task was refunded in full).`,
      failed,
      { hint: "Run the same command again: it uploads those numbers in a task of its own." },
    );
  }
  if (outcome.timedOut) {
    const processing = states.filter((task) => task.status === "processing").map((task) => task.id);
    throw timedOut(options, { parts: 0, notUploaded: 0, processing });
  }
  for (const task of states) {
    const row = await store.tasks.byId(scope, task.id);
    if (row && row.recordedAt === undefined) await recordTaskResult(deps, row.ref, task);
  }
  return { tasks, checkedAt: await store.tasks.checkedAt(tasks.map((task) => task.ref)) };
}

import { TaskFailedError } from "../errors.js";
import { count } from "../format-count.js";
import type { RunRecord, Scope, Store, TaskRecord } from "../store/store.js";
import { timedOut, type TimeoutSettings } from "../tasks/schedule-outcomes.js";
import { holderAlive, STALE_AFTER_MS } from "./lease.js";
import { addParts, numbersOf } from "./part-keys.js";
import type { InFlightTask, PlannedRun } from "./plan.js";
import type { SubmitRequest } from "./submit-request.js";

/**
 * A run's claim on the numbers it uploads is its parts' rows and numbers (see addParts),
 * written with its plan in one step that no other claim of the same product and scope
 * overlaps (Store.claim), on one machine or many sharing the store. The plan was made just
 * before, outside that step (reading the ledger takes a while, and no other run should wait
 * for it): it stands only if no other run claimed numbers of the product since the plan read
 * the store (its asOfTaskRef). Otherwise nothing is written and undefined is returned: the
 * caller plans again, and now sees the other claim, whose numbers it takes as in flight.
 */
export async function claimParts(
  store: Store,
  run: RunRecord,
  planned: Pick<PlannedRun, "plan" | "files">,
  options: Pick<SubmitRequest, "command" | "ledger" | "userKey" | "product" | "country">,
  now: () => number,
): Promise<TaskRecord[] | undefined> {
  // Read before the transaction: on SQLite it holds the write lock, and waiting on a file meanwhile would let another
  // store of this process (a library user's, the soak's in-process runs) block the thread on that lock, and itself.
  const partNumbers = options.ledger ? await Promise.all(planned.files.map((file) => numbersOf(file.path))) : undefined;
  return store.claim(run.scope, options.product, async (parts) => {
    const asOf = planned.plan.reuse?.asOfTaskRef;
    if (asOf !== undefined && (await parts.tasks.addedAfter(run.scope, options.product, asOf))) return undefined;
    await parts.runs.update(run.id, { plan: planned.plan });
    return addParts(parts, run, planned, options, now, [], partNumbers);
  });
}

/**
 * The open runs of a scope whose claims count as in flight: those held by a process that
 * may still be working on them (a live process on this machine, a fresh heartbeat). A claim
 * of a run whose process died is let go as its lease is, so nothing stays claimed for ever.
 */
export async function liveClaimants(store: Pick<Store, "runs">, scope: Scope, now: number): Promise<Set<string>> {
  const staleBefore = new Date(now - STALE_AFTER_MS).toISOString();
  const open = await store.runs.list({ scope, state: "open" });
  return new Set(open.filter((run) => run.lease && run.lease.heartbeatAt >= staleBefore && holderAlive(run.lease)).map((run) => run.id));
}

/** How often a claim of another run is looked at until the service has answered its upload. */
const CLAIM_POLL_MS = 1000;

/**
 * The tasks in flight with each claim among them (a part another run was uploading when
 * this run was planned) turned into its task, once the service answered that upload. A
 * claim let go without a task (its run stopped or was refused before the upload was
 * answered) answers nothing: TaskFailedError, and the next run of the command uploads
 * those numbers itself.
 */
export async function tasksOfClaims(
  deps: { store: Store; scope: Scope; now: () => number; sleep: (ms: number, signal?: AbortSignal) => Promise<void>; signal: AbortSignal },
  tasks: readonly InFlightTask[],
  options: TimeoutSettings,
): Promise<Array<InFlightTask & { taskId: string }>> {
  const deadline = options.timeoutMs === undefined ? undefined : deps.now() + options.timeoutMs;
  const known = new Map<number, string>();
  for (let pending = tasks.filter((task) => task.taskId === undefined); pending.length > 0;) {
    const live = await liveClaimants(deps.store, deps.scope, deps.now());
    const waiting: InFlightTask[] = [];
    for (const claim of pending) {
      const row =
        claim.runId === undefined ? undefined : (await deps.store.tasks.ofRun(claim.runId)).find((task) => task.ref === claim.ref);
      if (row?.taskId !== undefined) known.set(claim.ref, row.taskId);
      else if (row && row.status !== "failed" && live.has(claim.runId!)) waiting.push(claim);
      else throw claimLetGo(claim, row);
    }
    pending = waiting;
    if (pending.length === 0) break;
    if (deadline !== undefined && deps.now() >= deadline) throw timedOut(options, { parts: 0, notUploaded: 0, processing: [] });
    await deps.sleep(CLAIM_POLL_MS, deps.signal);
  }
  return tasks.map((task) => ({ ...task, taskId: task.taskId ?? known.get(task.ref)! }));
}

function claimLetGo(claim: InFlightTask, row: TaskRecord | undefined): TaskFailedError {
  const numbers = row?.count === undefined ? "numbers" : `${count(row.count)} numbers`;
  return new TaskFailedError(
    `Run ${claim.runId ?? "?"} had claimed ${numbers} of this list to upload, and stopped before the service answered that upload, so they have no result here.`,
    [],
    { hint: "Run the same command again: it uploads those numbers in a task of its own (nothing already checked is paid for again)." },
  );
}

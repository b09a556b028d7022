import { InputRejectedError } from "../errors.js";
import { identifierBatches } from "../ledger/reuse.js";
import type { RunRecord, StoreParts, TaskRecord } from "../store/store.js";
import { partKey } from "./identity.js";
import type { PlannedRun } from "./plan.js";
import type { SubmitRequest } from "./submit-request.js";

/**
 * The run's task rows, one per planned part, each with its idempotency key and (with the
 * ledger) its numbers: written before any upload, so a run planned meanwhile, here or on
 * another machine, counts them in flight. A continued run writes the numbers of a part that
 * has none: stopped between the two writes, or begun by an earlier release. `partNumbers`, when
 * given, are the parts' numbers already read (a claim's transaction reads no file).
 */
export async function addParts(
  store: Pick<StoreParts, "tasks">,
  run: RunRecord,
  planned: Pick<PlannedRun, "plan" | "files">,
  options: Pick<SubmitRequest, "command" | "ledger" | "userKey" | "product" | "country">,
  now: () => number,
  existing: readonly TaskRecord[] = [],
  partNumbers?: ReadonlyArray<ArrayLike<number>>,
): Promise<TaskRecord[]> {
  const { plan } = planned;
  const rows: TaskRecord[] = [];
  const withNumbers = async (row: TaskRecord) => {
    const part = row.part ?? 0;
    if (options.ledger) await store.tasks.addNumbers(row.ref, partNumbers?.[part] ?? (await numbersOf(planned.files[part]!.path)));
    rows.push(row);
  };
  for (const part of plan.parts) {
    const found = existing.find((task) => task.part === part.index);
    // A part that has its numbers keeps them as they are: a number forgotten since (ledger forget) stays forgotten.
    if (found && (await hasNumbers(store, found.ref))) rows.push(found);
    else if (found) await withNumbers(found);
    if (found) continue;
    const key = options.userKey ? userPartKey(options.userKey, part.index, plan.parts.length) : partKey(run.id, part.index, part.sha256);
    const taken = await store.tasks.withKey(run.scope, key);
    if (taken) throw keyUsedBefore(key, taken);
    await withNumbers(
      await store.tasks.add({
        scope: run.scope,
        runId: run.id,
        part: part.index,
        parts: plan.parts.length,
        idempotencyKey: key,
        product: options.product,
        ...((part.country ?? options.country) ? { country: part.country ?? options.country } : {}),
        count: part.count,
        sha256: part.sha256,
        submittedAt: new Date(now()).toISOString(),
        ...(options.command.retryOf ? { retryOf: options.command.retryOf } : {}),
      }),
    );
  }
  return rows;
}

/** Whether the store has a task's numbers (read no further than the first batch). */
async function hasNumbers(store: Pick<StoreParts, "tasks">, ref: number): Promise<boolean> {
  for await (const numbers of store.tasks.numbers(ref)) return numbers.length > 0;
  return false;
}

/** The numbers of a part's file. */
export async function numbersOf(path: string): Promise<Float64Array> {
  const batches: Float64Array[] = [];
  for await (const batch of identifierBatches(path)) batches.push(batch);
  const numbers = new Float64Array(batches.reduce((sum, batch) => sum + batch.length, 0));
  let at = 0;
  for (const batch of batches) {
    numbers.set(batch, at);
    at += batch.length;
  }
  return numbers;
}

/** A user's key covers one task; with several parts each gets a numbered suffix. */
function userPartKey(key: string, index: number, parts: number): string {
  return parts === 1 ? key : `${key}-${index + 1}`;
}

function keyUsedBefore(key: string, earlier: TaskRecord): InputRejectedError {
  const task = earlier.taskId ? `task ${earlier.taskId}` : "no task id recorded";
  return new InputRejectedError(
    `The idempotency key "${key}" was used on ${earlier.submittedAt ?? "an earlier day"} (${task}${earlier.runId ? `, run ${earlier.runId}` : ""}). ` +
      "The service would return that task instead of checking this list, so nothing was uploaded.",
    { hint: "Give each run its own --idempotency-key (for example with the date in it), or leave it out: every run derives its own." },
  );
}

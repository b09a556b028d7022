import { createReadStream } from "node:fs";
import { planOf } from "./run-record.js";
import { createInterface } from "node:readline";
import type { ChangesTally } from "../ledger/changes.js";
import { identifierKey } from "../spec/identifier-key.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import type { RunRecord, Store, TaskRecord } from "../store/store.js";

/** The `column` of a changes row for a number that is in the list now and was not at its previous check, and the reverse. */
export const APPEARED = "(appeared)";
export const LEFT = "(left)";

/** How many of the scope's latest runs are looked through for the previous check of a list. */
const RECENT_RUNS = 500;

/**
 * What a run's list is compared with: the latest finished run of the same command (same
 * identity: list path, product, country and reading flags, in the same scope) when it kept
 * exactly the same numbers (its list's fingerprint), so nothing appeared or left; else the
 * latest finished run of the command whose tasks were given every number it kept, whose
 * numbers the store holds. A run that took results from the ledger (or from a task in
 * flight) does not know which of its numbers those were, since the store keeps the numbers
 * of tasks and not of lists: it is passed over for an earlier one.
 */
export type PreviousCheck = { run: RunRecord; sameList: true } | { run: RunRecord; sameList: false; tasks: TaskRecord[] };

export async function previousCheck(store: Store, run: RunRecord, list: string): Promise<PreviousCheck | undefined> {
  const runs = await store.runs.list({ scope: run.scope, state: "finished", limit: RECENT_RUNS });
  let latest = true;
  for (const earlier of runs) {
    if (earlier.identity !== run.identity || earlier.id === run.id || earlier.startedAt > run.startedAt) continue;
    const plan = planOf(earlier);
    if (latest && plan?.list === list) return { run: earlier, sameList: true };
    latest = false;
    const tasks = (await store.tasks.ofRun(earlier.id)).filter((task) => task.taskId !== undefined);
    if (plan?.kept !== undefined && plan.kept > 0 && given(tasks) === plan.kept) return { run: earlier, sameList: false, tasks };
  }
  return undefined;
}

/**
 * The rows of the numbers that appeared in the list since its previous check (in list
 * order), then of those that left it (by task, then number), each counted in `tally`:
 * `identifier, (appeared)|(left), "", "", previous_checked_at (left: its check), ""`.
 * `lists` are the run's prepared lists, one identifier a line. Nothing is compared (no row,
 * and the tally says so) when the store no longer holds every number of that check: pruned
 * by ledger-retention, or some of them forgotten.
 */
export async function* listChangeRows(
  store: Store,
  lists: ReadonlyArray<{ path: string }>,
  previous: PreviousCheck,
  tally: ChangesTally,
): AsyncGenerator<readonly string[]> {
  const since = { run: previous.run.id, checkedAt: previous.run.finishedAt ?? previous.run.startedAt };
  if (previous.sameList) {
    tally.addList({ appeared: 0, left: 0, since });
    return;
  }
  const before = new IdentifierSet();
  for (const task of previous.tasks)
    for await (const batch of store.tasks.numbers(task.ref)) for (const number of batch) before.set(number, 1);
  if (before.size !== given(previous.tasks)) return;
  const now = new IdentifierSet();
  let appeared = 0;
  for (const list of lists) {
    for await (const line of createInterface({ input: createReadStream(list.path), crlfDelay: Infinity })) {
      if (line === "") continue;
      const key = identifierKey(line);
      now.set(key, 1);
      if (!before.has(key)) {
        appeared++;
        yield [line, APPEARED, "", "", "", ""];
      }
    }
  }
  let left = 0;
  for (const task of previous.tasks) {
    // A task keeps its numbers as they were given: those that left are told in number order.
    const gone: number[] = [];
    for await (const batch of store.tasks.numbers(task.ref)) for (const number of batch) if (!now.has(number)) gone.push(number);
    left += gone.length;
    for (const number of gone.sort((a, b) => a - b)) yield [String(number), LEFT, "", "", task.checkedAt ?? "", ""];
  }
  tally.addList({ appeared, left, since });
}

/** Numbers the tasks were given, as their counts say. */
function given(tasks: readonly TaskRecord[]): number {
  return tasks.reduce((sum, task) => sum + (task.count ?? 0), 0);
}

import { ResultCollection } from "./result-collection.js";
import type { NewTask, RunRecord, Store, TaskPatch, TaskRecord } from "./store.js";

/** Tasks read from the source at once. */
const TASK_PAGE = 500;

/** What an import added to the target (all 0 when everything was there already). */
export interface ImportSummary {
  runs: number;
  /** Open runs copied as abandoned, because the same command has an open run in the target. */
  abandoned: number;
  tasks: number;
  /** Result rows copied to the ledger. */
  results: number;
  /** Result rows erased from the source: every result the target now holds (copied now or before). */
  erased: number;
}

/**
 * Copies what one store holds (a machine's local SQLite store) into another (a team's
 * shared one): runs, tasks with their idempotency keys and states, and the ledger's
 * recorded results with the dates they were checked. Importing again copies nothing twice: a
 * run is known by its id, a task by its idempotency key in its scope (or, without one, by its
 * service task id), and a task's results are copied until the target has them marked
 * recorded, so an import cut short is completed by the next. Task references differ between
 * stores: results go under the target's reference of their task. A task's results are read a
 * page at a time and recorded as a download's are (Ledger.record: a few statements per task,
 * none per number).
 *
 * What `ledger forget` remembers for the source's open runs (hashes, see erasures.ts) is
 * remembered in the target for every task it has, so a run carried on there does not bring
 * a forgotten number back either. The results are moved, not copied: once every task is done, the source's results that the
 * target holds are erased from the source as `ledger forget` erases, so no second copy of
 * the numbers stays on the machine (its runs and tasks stay, for its history). An import cut
 * short erases nothing; the next one completes it.
 */
export async function importStore(source: Store, target: Store): Promise<ImportSummary> {
  const summary: ImportSummary = { runs: 0, abandoned: 0, tasks: 0, results: 0, erased: 0 };
  // Oldest first: of two open runs of one command, the later one is abandoned, as it would have been here.
  for (const run of (await source.runs.list({})).reverse()) await importRun(run, target, summary);
  const held: number[] = [];
  for (let after = 0; ;) {
    const tasks = await source.tasks.after(after, TASK_PAGE);
    if (tasks.length === 0) break;
    for (const task of tasks) if (await importTask(task, source, target, summary)) held.push(task.ref);
    after = tasks[tasks.length - 1]!.ref;
  }
  // What was forgotten while its runs were open stays forgotten for them where they are carried on now.
  for (const erasure of await source.ledger.erasures()) await target.ledger.rememberErasure(erasure);
  summary.erased = (await source.ledger.forgetTasks(held)).results;
  return summary;
}

/**
 * An open run whose command has another open run in the target (the team started it while
 * this machine had its own) is copied abandoned: its tasks and their results come along, and
 * the same command continues the target's run.
 */
async function importRun(run: RunRecord, target: Store, summary: ImportSummary): Promise<void> {
  const open = run.state === "open" ? await target.runs.open(run.scope, run.identity) : undefined;
  if (open === undefined || open.id === run.id) {
    if (await target.runs.copy(run)) summary.runs++;
    return;
  }
  const { lease: _lease, ...unleased } = run;
  const abandoned: RunRecord = { ...unleased, state: "abandoned", note: `Imported while run ${open.id} of the same command was open.` };
  if (await target.runs.copy(abandoned)) {
    summary.runs++;
    summary.abandoned++;
  }
}

/** Copies a task and its recorded result; true when the target holds that result (copied now or before). */
async function importTask(task: TaskRecord, source: Store, target: Store, summary: ImportSummary): Promise<boolean> {
  const known = await sameTask(task, target);
  if (known === null) return false;
  const { ref: _ref, recordedAt, ...fields } = task;
  let targetRef: number;
  if (known === undefined) {
    targetRef = (await target.tasks.add(fields satisfies NewTask)).ref;
    summary.tasks++;
  } else {
    targetRef = known.ref;
    const missing = missingFields(known, task);
    if (Object.keys(missing).length > 0) await target.tasks.update(targetRef, missing);
    if (known.recordedAt !== undefined) return recordedAt !== undefined;
  }
  // Its numbers: those in flight, or answered without a result, keep counting as checked there.
  const numbers: number[] = [];
  for await (const some of source.tasks.numbers(task.ref)) for (const number of some) numbers.push(number);
  await target.tasks.addNumbers(targetRef, numbers);
  if (recordedAt === undefined) return false;
  let rows: ResultCollection | undefined;
  for await (const page of source.ledger.ofTask(task.ref)) {
    if (page.length === 0) continue;
    rows ??= new ResultCollection(Object.keys(page[0]!.values));
    for (const row of page) rows.add([row.identifier, ...rows.columns.map((column) => row.values[column] ?? "")]);
  }
  rows ??= new ResultCollection([]);
  await target.ledger.record(targetRef, rows, recordedAt);
  summary.results += rows.size;
  return true;
}

/** The target's record of the same task, undefined when it has none, null when nothing identifies the task. */
async function sameTask(task: TaskRecord, target: Store): Promise<TaskRecord | undefined | null> {
  if (task.idempotencyKey !== undefined) return target.tasks.withKey(task.scope, task.idempotencyKey);
  if (task.taskId !== undefined) return target.tasks.byId(task.scope, task.taskId);
  return null;
}

/** What the source knows of a task that the target does not (a task copied while in flight and finished since). */
function missingFields(known: TaskRecord, task: TaskRecord): TaskPatch {
  return Object.fromEntries(
    PATCHABLE.filter((field) => known[field] === undefined && task[field] !== undefined).map((field) => [field, task[field]]),
  );
}

const PATCHABLE = [
  "taskId",
  "createdAt",
  "status",
  "total",
  "successCnt",
  "failureCnt",
  "checkedAt",
  "replayed",
  "staged",
  "country",
] as const satisfies ReadonlyArray<keyof TaskPatch>;

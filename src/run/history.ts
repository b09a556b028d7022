import type { RunRecord, Store, TaskRecord } from "../store/store.js";
import type { RunPlan } from "./plan.js";

/** What `bulkcheck runs` shows of a run. */
export interface RunSummary {
  id: string;
  startedAt: string;
  finishedAt?: string;
  state: RunRecord["state"];
  kind: RunRecord["kind"];
  /** The source's path, or "stdin". */
  source: string;
  product: string;
  countries: string[];
  /** Numbers the list kept, those the ledger served, and those uploaded to the service. */
  kept: number;
  reused: number;
  uploaded: number;
  /** What the service charged: each finished task's checked numbers at the run's price. */
  chargedMicros: number;
  /** Where the run wrote its output, when it did. */
  output?: string;
  host?: string;
  user?: string;
  note?: string;
  tasks: number;
}

/** One task of a run, as `runs show` lists it. */
export interface RunTaskSummary {
  part: number;
  taskId?: string;
  country?: string;
  numbers: number;
  status: string;
  checked?: number;
  noResult?: number;
  checkedAt?: string;
  recorded: boolean;
}

/** Per-number prices by product, for runs that journalled none (imported from 0.1). */
export type Prices = Readonly<Record<string, number>>;

/** The runs, newest first, each with its tasks' counts and charge. */
export async function runSummaries(store: Store, limit: number, prices: Prices): Promise<RunSummary[]> {
  const runs = await store.runs({ limit });
  return Promise.all(runs.map(async (run) => summaryOf(run, await store.tasksOfRun(run.id), prices)));
}

/** One run and its tasks, by id or an unambiguous prefix of one. */
export async function runDetails(
  store: Store,
  idOrPrefix: string,
  prices: Prices,
): Promise<{ run: RunSummary; tasks: RunTaskSummary[] } | undefined> {
  const run = await store.run(idOrPrefix);
  if (!run) return undefined;
  const tasks = await store.tasksOfRun(run.id);
  return {
    run: summaryOf(run, tasks, prices),
    tasks: tasks.map((task) => ({
      part: (task.part ?? 0) + 1,
      ...(task.taskId ? { taskId: task.taskId } : {}),
      ...(task.country ? { country: task.country } : {}),
      numbers: task.count ?? 0,
      status: task.status ?? (task.taskId ? "processing" : "not uploaded"),
      ...(task.successCnt === undefined ? {} : { checked: task.successCnt }),
      ...(task.failureCnt === undefined ? {} : { noResult: task.failureCnt }),
      ...(task.checkedAt ? { checkedAt: task.checkedAt } : {}),
      recorded: task.recordedAt !== undefined,
    })),
  };
}

function summaryOf(run: RunRecord, tasks: readonly TaskRecord[], prices: Prices): RunSummary {
  const plan = run.plan as Partial<RunPlan> | undefined;
  const price = plan?.priceMicros ?? prices[run.product] ?? 0;
  const countries = plan?.byCountry?.map((each) => each.country) ?? (run.country && run.country !== "auto" ? [run.country] : []);
  const output = (run.output as { path?: string } | undefined)?.path;
  const uploaded = tasks.filter((task) => task.taskId).reduce((sum, task) => sum + (task.count ?? 0), 0);
  return {
    id: run.id,
    startedAt: run.startedAt,
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    state: run.state,
    kind: run.kind,
    source: run.source.path ?? "stdin",
    product: run.product,
    countries,
    kept: plan?.kept ?? uploaded,
    reused: plan?.reused ?? 0,
    uploaded,
    chargedMicros: tasks.reduce((sum, task) => sum + (task.successCnt ?? 0) * price, 0),
    ...(output ? { output } : {}),
    ...(run.host ? { host: run.host } : {}),
    ...(run.user ? { user: run.user } : {}),
    ...(run.note ? { note: run.note } : {}),
    tasks: tasks.length,
  };
}

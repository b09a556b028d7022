import type { RunFilter, RunRecord, Store, TaskRecord } from "../store/store.js";
import { RunRecordError } from "../store/health.js";
import { outputOf, planOf, type ChainLink } from "./run-record.js";

/** What `bulkcheck runs` shows of a run: its numbers and money (RunCounts, of one run), and where it belongs. */
export interface RunSummary extends Omit<RunCounts, "runs"> {
  id: string;
  /** The service (its base URL) and profile the run belongs to. */
  service: string;
  profile: string;
  startedAt: string;
  finishedAt?: string;
  state: RunRecord["state"];
  kind: RunRecord["kind"];
  /** The source's path, or "stdin". */
  source: string;
  product: string;
  countries: string[];
  /** Where the run wrote its output, when it did. */
  output?: string;
  /** For a run of a chain (submit --then): every product's run, in chain order. */
  chain?: ChainLink[];
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

/** The runs the filter lets through, newest first, each with its tasks' counts and charge. */
export async function runSummaries(store: Store, filter: RunFilter, prices: Prices): Promise<RunSummary[]> {
  const runs = await store.runs.list(filter);
  return Promise.all(runs.map(async (run) => summaryOf(run, await store.tasks.ofRun(run.id), prices)));
}

/** What some runs add up to. */
export interface RunCounts {
  runs: number;
  /** Numbers the lists kept, those the ledger (or another run's task in flight) served, and those uploaded to the service. */
  kept: number;
  reused: number;
  uploaded: number;
  /** Uploaded numbers that had a fresh result, checked again to fill a task up to the service's minimum size. */
  padded: number;
  /** Numbers the service checked (with a result) in the runs' finished tasks: what it charged for. */
  checked: number;
  /** What the service charged: the checked numbers at each run's price. */
  chargedMicros: number;
  /** What was not paid for again (reused, answered without a result, in flight) at each run's price. */
  savedMicros: number;
}

/** The sums of the runs listed, in all and per service, profile and product (money is only summed across products here). */
export interface RunTotals extends RunCounts {
  /** In the order the runs list them first. */
  groups: Array<{ service: string; profile: string; product: string } & RunCounts>;
}

/** The totals of `runs`: every figure of each run counted once in all, and once in its group. */
export function runTotals(runs: readonly RunSummary[]): RunTotals {
  const groups = new Map<string, RunTotals["groups"][number]>();
  const all = noRuns();
  for (const run of runs) {
    const key = JSON.stringify([run.service, run.profile, run.product]);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { service: run.service, profile: run.profile, product: run.product, ...noRuns() }));
    for (const counts of [all, group]) add(counts, run);
  }
  return { ...all, groups: [...groups.values()] };
}

function noRuns(): RunCounts {
  return { runs: 0, kept: 0, reused: 0, uploaded: 0, padded: 0, checked: 0, chargedMicros: 0, savedMicros: 0 };
}

function add(counts: RunCounts, run: RunSummary): void {
  counts.runs++;
  counts.kept += run.kept;
  counts.reused += run.reused;
  counts.uploaded += run.uploaded;
  counts.padded += run.padded;
  counts.checked += run.checked;
  counts.chargedMicros += run.chargedMicros;
  counts.savedMicros += run.savedMicros;
}

/** One run and its tasks, by id or an unambiguous prefix of one. */
export async function runDetails(
  store: Store,
  idOrPrefix: string,
  prices: Prices,
): Promise<{ run: RunSummary; tasks: RunTaskSummary[] } | undefined> {
  const run = await store.runs.get(idOrPrefix);
  if (!run) return undefined;
  const tasks = await store.tasks.ofRun(run.id);
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
  // A list of runs shows a run whose plan cannot be read by its tasks alone, and says why.
  const unreadable: string[] = [];
  const readable = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof RunRecordError)) throw error;
      unreadable.push(error.message);
      return undefined;
    }
  };
  const plan = readable(() => planOf(run));
  const { path: output, chain } = readable(() => outputOf(run)) ?? {};
  const price = plan?.priceMicros ?? prices[run.product] ?? 0;
  const countries = plan?.byCountry?.map((each) => each.country) ?? (run.country && run.country !== "auto" ? [run.country] : []);
  const uploaded = tasks.filter((task) => task.taskId).reduce((sum, task) => sum + (task.count ?? 0), 0);
  const checked = tasks.reduce((sum, task) => sum + (task.successCnt ?? 0), 0);
  return {
    id: run.id,
    service: run.scope.baseUrl,
    profile: run.scope.profile,
    startedAt: run.startedAt,
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    state: run.state,
    kind: run.kind,
    source: run.source.path ?? "stdin",
    product: run.product,
    countries,
    kept: plan?.kept ?? uploaded,
    // Results taken from the ledger, or from another run's task that was in flight.
    reused: (plan?.reused ?? 0) + (plan?.inFlight?.numbers ?? 0),
    uploaded,
    padded: plan?.padded ?? 0,
    checked,
    chargedMicros: checked * price,
    savedMicros: plan?.savedMicros ?? 0,
    ...(output ? { output } : {}),
    ...(chain ? { chain } : {}),
    ...(run.host ? { host: run.host } : {}),
    ...(run.user ? { user: run.user } : {}),
    ...(run.note || unreadable.length > 0 ? { note: [run.note, ...unreadable].filter(Boolean).join(" ") } : {}),
    tasks: tasks.length,
  };
}

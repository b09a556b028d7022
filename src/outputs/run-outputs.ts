import type { ApiClient } from "../api/types.js";
import type { ResultRecording } from "../ledger/recording.js";
import { ChangesTally, changesTable, type ChangesSummary } from "../ledger/changes.js";
import { pruneResults } from "../run/erase.js";
import { writeTable, type ExportDestination } from "../ledger/export.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { RunRecord, Scope, Store } from "../store/store.js";
import type { StagedResults } from "../tasks/download.js";
import type { PreparationSettings } from "../prepare/settings.js";
import type { UploadResult } from "../tasks/submit.js";
import { operationSignal } from "../operation-signal.js";
import { collectAbandonedRuns } from "../run/abandoned.js";
import { listChangeRows, previousCheck } from "../run/list-changes.js";
import { reusedSources } from "../run/reused-results.js";
import { addIdentifiers } from "../tasks/list-slice.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import { fetchToStaging, Staging, stagingRoot, type FetchDeps } from "../run/staging.js";
import type { RunOutcome } from "../run/submit-request.js";

export interface RunOutputsDeps {
  store: Store;
  scope: Scope;
  client: () => Promise<ApiClient>;
  product: ServiceType;
  /** Whether the run keeps its results in the ledger (and reuses from it). */
  ledger: boolean;
  /** bulkcheck's state directory: with the ledger on, staged results wait there (they are in the store already). */
  stateDir: string;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  /** Told what happens on the way, in order (see RunOutputsEvent). */
  onEvent: (event: RunOutputsEvent) => void;
  /** Where results go into the ledger (off this thread). */
  recording: ResultRecording;
}

/** What a run's outputs tell as they are produced. */
export type RunOutputsEvent =
  /** A result's transfer broke off and starts again with a fresh link. */
  | { type: "restart"; error: Error }
  /** A task's result file is not published yet; it is checked again in `delayMs`. */
  | { type: "not-published"; taskId: string; delayMs: number }
  /** Results of `tasks` tasks of abandoned runs, finished since, were kept in the ledger. */
  | { type: "collected"; tasks: number }
  /** They could not be collected this time; the next run tries again. */
  | { type: "collect-failed"; error: Error };

/** Where --changes goes: a table in a format, to a file or a stream the caller keeps. */
export interface ChangesDestination {
  format: "csv" | "xlsx";
  destination: ExportDestination;
  /** Also a row for each number that appeared in the list or left it since its previous check (--changes-appeared-left). */
  listRows?: boolean;
}

/**
 * A run's results on their way to its output: each task's result fetched into the run's
 * staging area as the task finishes (and recorded in the ledger); once every task has,
 * the staged results and the ledger's reused ones read as one source, and the changes
 * since each number's previous check; once the output is written, the staging removed,
 * results past the retention pruned, and the results of abandoned runs whose tasks have
 * finished since collected into the ledger.
 */
export class RunOutputs {
  /**
   * Each run's staging area, opened by its first task that finishes (tasks finish concurrently,
   * so they share the one opening); a chain's product has several runs (its runs part by part).
   */
  readonly #stagings = new Map<string, Promise<Staging>>();
  /** The staging area of each task staged. */
  readonly #stagingOfTask = new Map<string, Promise<Staging>>();

  constructor(private readonly deps: RunOutputsDeps) {}

  /** Fetches a finished task's result into the run's staging area (and the ledger). */
  async stage(result: UploadResult, run: RunRecord): Promise<void> {
    const { deps } = this;
    const opening = this.#stagings.get(run.id) ?? Staging.open(stagingRoot(deps.stateDir, deps.ledger), run.id, deps.store);
    this.#stagings.set(run.id, opening);
    this.#stagingOfTask.set(result.task.id, opening);
    const staging = await opening;
    const { product, sleep, onEvent } = deps;
    // Tasks finish together: each transfer's streams and waits listen through a signal of its own.
    const transfer = operationSignal(deps.signal);
    try {
      const fetch: FetchDeps = {
        client: await deps.client(),
        product,
        sleep,
        signal: transfer.signal,
        onRestart: (error) => onEvent({ type: "restart", error }),
        onWait: (taskId, delayMs) => onEvent({ type: "not-published", taskId, delayMs }),
      };
      await fetchToStaging(deps.ledger ? { ...fetch, ledger: deps.recording } : fetch, staging, result);
    } finally {
      transfer.release();
    }
  }

  /**
   * The run's results as its output reads them: its tasks' staged files, then the
   * ledger's reused rows. Absent when the run has tasks and none was staged (no --wait
   * fetching): the output then downloads them.
   */
  async results(outcome: RunOutcome): Promise<StagedResults | undefined> {
    const staging = await this.#stagings.get(outcome.run.id);
    // A run that went on without its failed tasks (SubmitRequest.keepFailedTasks) reads the others; the failed ones' numbers are named.
    const [succeeded, failed] = partition(outcome.results, (result) => result.task.status !== "failed");
    if (!staging && succeeded.length > 0) return undefined;
    const { store } = this.deps;
    return {
      ...(await this.#read(succeeded, outcome.prepared.settings)),
      reused: reusedSources(store, outcome.reused, outcome.reusedTasks),
      unsent: {
        reused: outcome.reused,
        waiting: outcome.waiting,
        ...(failed.length > 0 ? { failed: await numbersOf(failed.map((result) => result.upload.path)) } : {}),
      },
    };
  }

  /**
   * Tasks of the run whose results are staged already (see stage), as a source of rows before
   * the run has ended: a chain chooses its next product's numbers by them part by part.
   */
  async staged(results: readonly UploadResult[], settings: PreparationSettings): Promise<StagedResults> {
    return { ...(await this.#read(results, settings)), reused: [] };
  }

  async #read(results: readonly UploadResult[], settings: PreparationSettings): Promise<Omit<StagedResults, "reused" | "unsent">> {
    const { store, now } = this.deps;
    const refOf = new Map(results.map((result) => [result.task.id, result.upload.ref]));
    const dates = await store.tasks.checkedAt([...refOf.values()]);
    const fallback = new Date(now()).toISOString();
    return {
      product: this.deps.product,
      settings,
      tasks: results.map((result) => result.task),
      read: async (task: Task) => {
        const staging = this.#stagingOfTask.get(task.id);
        if (!staging) throw new Error(`task ${task.id} has no staged result`);
        return (await staging).read(task);
      },
      checkedAt: (task: Task) => dates.get(refOf.get(task.id)!) ?? fallback,
    };
  }

  /**
   * What changed since each number's previous result in the ledger, and the list itself
   * since its previous check (see list-changes.ts), tallied, and written as a table when
   * there is somewhere to write it (--changes; a report, a summary only count).
   */
  async changes(outcome: RunOutcome, write?: ChangesDestination): Promise<ChangesSummary> {
    const tally = new ChangesTally();
    const table = await this.changesTable(outcome, tally, { listRows: Boolean(write?.listRows) });
    if (write) await writeTable(table, write.format, write.destination);
    else for await (const _row of table) void _row;
    return tally.summary();
  }

  /**
   * The changes table of the run (header first), tallied into `tally` as it is read to the end:
   * each changed column a row, named `columnPrefix` + its name (a chain's later product); then,
   * with `list`, the list's numbers that appeared or left, counted, and written as rows with `listRows`.
   */
  async changesTable(
    outcome: RunOutcome,
    tally: ChangesTally,
    options: { listRows: boolean; list?: boolean; columnPrefix?: string },
  ): Promise<AsyncIterable<readonly string[]>> {
    const { store } = this.deps;
    const refs = outcome.results.map((result) => result.upload.ref);
    const previous = options.list === false ? undefined : await previousCheck(store, outcome.run, outcome.plan.list);
    const list = previous ? listChangeRows(store, outcome.prepared.chunks, previous, tally) : undefined;
    const table = changesTable(store, refs, tally);
    return withListRows(options.columnPrefix ? prefixedColumns(table, options.columnPrefix) : table, list, options.listRows);
  }

  /**
   * Once the run's output is written: its staged files go, results older than
   * `retentionSeconds` are pruned (staged ones of other runs included), and abandoned runs' results are collected (a result
   * that cannot be collected now is collected by a later run).
   */
  async finish(retentionSeconds: number | undefined): Promise<void> {
    const { deps } = this;
    for (const staging of this.#stagings.values()) await (await staging).remove();
    if (!deps.ledger) return;
    if (retentionSeconds !== undefined) {
      await pruneResults({ stores: [deps.store], stateDir: deps.stateDir }, new Date(deps.now() - retentionSeconds * 1000).toISOString());
    }
    try {
      const tasks = await collectAbandonedRuns({ ...deps, client: await deps.client() });
      if (tasks > 0) deps.onEvent({ type: "collected", tasks });
    } catch (error) {
      deps.onEvent({ type: "collect-failed", error: error as Error });
    }
  }
}

/** The changes table, then the list's rows when they are `written` (they are read to the end either way: that counts them). */
async function* withListRows(
  table: AsyncIterable<readonly string[]>,
  list: AsyncIterable<readonly string[]> | undefined,
  written: boolean,
): AsyncGenerator<readonly string[]> {
  yield* table;
  if (list) for await (const row of list) if (written) yield row;
}

/** The changes table with every changed column's name after `prefix`. */
async function* prefixedColumns(table: AsyncIterable<readonly string[]>, prefix: string): AsyncGenerator<readonly string[]> {
  let header = true;
  for await (const row of table) {
    yield header ? row : [row[0]!, prefix + row[1]!, ...row.slice(2)];
    header = false;
  }
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

/** The numbers of the parts at `paths`, as one set. */
async function numbersOf(paths: readonly string[]): Promise<IdentifierSet> {
  const numbers = new IdentifierSet();
  for (const path of paths) await addIdentifiers(path, numbers);
  return numbers;
}

import { Writable, type Readable } from "node:stream";
import type { ApiClient } from "../api/types.js";
import { UsageError } from "../errors.js";
import { writeResults, type OutputFormat, type ResultSummary, type SourceSummary } from "../results/index.js";
import type { ResultRecorder, ResultSource } from "../results/read-results.js";
import type { UploadedIdentifiers } from "../results/result-rules.js";
import type { TaskOrigin } from "./origins.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { IdentifierSet } from "../spec/identifier-set.js";
import type { PreparationSettings } from "../prepare/settings.js";
import { billing, excludedBeforeUpload, type ExcludedBeforeUpload } from "./billing.js";
import { resultOpener, withTransferRetries, type OpenResultOptions } from "./fetch-result.js";
import { summarySheet, type ResultCounts } from "./summary-sheet.js";

export interface DownloadDeps {
  /** Built on first use: what fails before any request (a task the store does not know) needs no API key. */
  client: () => Promise<Pick<ApiClient, "checkTask" | "openResult">>;
  /** What this machine's store knows of the tasks, by id: their rows and their runs (preparation, source). */
  origins: (ids: readonly string[]) => Promise<ReadonlyMap<string, TaskOrigin>>;
  /** The ledger's recorder for a task's result as it is read; none when the ledger is off or has the result already. */
  recorder?: (task: Task) => Promise<ResultRecorder | undefined>;
  /** The recordings those recorders start, waited for once the output is written (see ResultRecording.settle). */
  recording?: { settle(): Promise<void> };
  /** The numbers `ledger forget` erased since a task was given them, whose rows its result must not give (see ResultSource.withheld). */
  withheld?: (task: Task) => Promise<UploadedIdentifiers | undefined>;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  /** A transfer broke midway and starts again with a fresh link. */
  onRestart?: (error: Error) => void;
  /** A task's result file is not published yet; it is checked again in `delayMs`. */
  onWait?: (taskId: string, delayMs: number) => void;
  /** Results fetched already: neither checked nor downloaded again. */
  staged?: StagedResults;
  /** Without `staged`: the results the tasks' runs took from the ledger, read after the tasks' own. */
  reused?: readonly ResultSource[];
  /** Something that may make a few rows of a join not match (another source file, another libphonenumber-js). */
  onWarning?: (text: string) => void;
}

/**
 * The numbers of a run's list that none of its tasks was given: those whose results it
 * takes from the ledger (or from another run's task in flight), and those it left waiting
 * for a later run. A join tells their rows from the rows its tasks checked.
 */
export interface UnsentNumbers {
  reused: IdentifierSet;
  waiting: IdentifierSet;
  /** The numbers of the run's tasks that failed, when the run went on without them (a chain's first product). */
  failed?: IdentifierSet;
}

/**
 * A run's results, fetched already (into its staging area): the tasks' final states, in
 * order, where each result is read from, when each was checked, and the results the
 * ledger serves for the run's reused numbers. A run's output ends with `checked_at`.
 */
export interface StagedResults {
  /** The run's product: its output's columns, even when every result comes from the ledger. */
  product: ServiceType;
  /** How the run's list was read: a join reads the source the same way, even when the run has no task. */
  settings: PreparationSettings;
  tasks: readonly Task[];
  read: (task: Task) => Promise<Readable>;
  checkedAt: (task: Task) => string;
  reused: readonly ResultSource[];
  /** Which of the list's numbers the ledger served and which wait (see UnsentNumbers). */
  unsent?: UnsentNumbers;
}

export interface DownloadTarget {
  /** The file to write (atomically); without one the rows are only read and counted (for a report). */
  path?: string;
  /** Its mode (default: kept from a file it replaces, else the umask's). */
  mode?: number;
  /** Replace a file that exists. */
  force: boolean;
  format: OutputFormat;
  /** Colour in a boxed table. */
  colour: boolean;
  /** Per-number prices, for what the run cost in an xlsx Summary sheet. */
  prices?: Record<ServiceType, number>;
  /** The terminal width a boxed table fits into. */
  tableWidth?: number | undefined;
  /** Whether a table is read on a terminal: boxed there, TSV of neutralised cells anywhere else. */
  terminal?: boolean;
}

export interface DownloadOutcome {
  summary: ResultSummary;
  /** The tasks as last checked (a restarted transfer checks again), for what they cost. */
  tasks: Task[];
  /** What preparation kept out of the upload, when the journal knows. */
  excluded: ExcludedBeforeUpload | undefined;
}

/**
 * Downloads (and merges, in the order given) the results of finished tasks into
 * one file. A transfer that breaks midway starts again from fresh links.
 */
export async function downloadResults(deps: DownloadDeps, taskIds: readonly string[], target: DownloadTarget): Promise<DownloadOutcome> {
  const client = await deps.client();
  const checked = deps.staged ? [...deps.staged.tasks] : await Promise.all(taskIds.map((id) => client.checkTask(id)));
  const tasks = new Map(checked.map((task) => [task.id, task]));
  const serviceType = productOf(checked, deps.staged);
  const sources = await taskSources(deps, client, checked, (fresh) => tasks.set(fresh.id, fresh));
  const excluded = excludedBeforeUpload((await deps.origins(taskIds)).values());
  const { prices } = target;
  const summary = await recordedAfter(
    deps,
    withTransferRetries(
      () =>
        writeResults(
          sources,
          target.path === undefined
            ? { stream: discard(), end: true }
            : { path: target.path, force: target.force, ...(target.mode === undefined ? {} : { mode: target.mode }) },
          {
            serviceType,
            format: target.format,
            signal: deps.signal,
            ...(deps.staged ? { checkedAt: true } : {}),
            colour: target.colour,
            summarySheet: (tally, read) => {
              const latest = [...tasks.values()];
              const bill = prices && billing(latest, prices);
              return summarySheet({ product: serviceType, tasks: latest, bill, counts: resultCounts(latest, read), excluded }, tally);
            },
            tableWidth: target.tableWidth,
            ...(target.terminal === undefined ? {} : { terminal: target.terminal }),
          },
        ),
      deps,
    ),
  );
  return { summary, tasks: [...tasks.values()], excluded };
}

/**
 * What `reading` the tasks' results gives, once the recordings it started are done: every
 * result it read whole is in the ledger (the others' recordings are stopped).
 * @throws the reading's failure, else the first recording's.
 */
export async function recordedAfter<T>(deps: Pick<DownloadDeps, "recording">, reading: Promise<T>): Promise<T> {
  let value: T;
  try {
    value = await reading;
  } catch (error) {
    await deps.recording?.settle().catch(() => undefined);
    throw error;
  }
  await deps.recording?.settle();
  return value;
}

/**
 * The tasks' results as sources, in order: each read from its staged copy or from the
 * service, dated and recorded as the deps say; then, for a run, the results the ledger
 * serves.
 */
export async function taskSources(
  deps: Omit<DownloadDeps, "client" | "origins">,
  client: OpenResultOptions["client"],
  tasks: readonly Task[],
  onTask?: (task: Task) => void,
): Promise<ResultSource[]> {
  const sources: ResultSource[] = [];
  for (const task of tasks) {
    const recorder = await deps.recorder?.(task);
    const withheld = await deps.withheld?.(task);
    sources.push({
      label: resultLabel(task.id),
      task,
      ...(task.success_cnt === undefined ? {} : { expectedRows: task.success_cnt }),
      open: resultSource(deps, client, task, onTask),
      ...(deps.staged ? { checkedAt: deps.staged.checkedAt(task) } : {}),
      ...(recorder ? { recorder } : {}),
      ...(withheld ? { withheld } : {}),
    });
  }
  return [...sources, ...(deps.staged?.reused ?? deps.reused ?? [])];
}

/**
 * Where a checked task's result is read from: its staged copy, or the service (see
 * resultOpener), telling `onTask` of each fresh check a restarted transfer makes.
 */
export function resultSource(
  deps: Omit<DownloadDeps, "client" | "origins">,
  client: OpenResultOptions["client"],
  task: Task,
  onTask?: (task: Task) => void,
): () => Promise<Readable> {
  const { staged } = deps;
  if (staged) return () => staged.read(task);
  return resultOpener(task, {
    client,
    sleep: deps.sleep,
    signal: deps.signal,
    ...(onTask ? { onTask } : {}),
    ...(deps.onWait ? { onWait: deps.onWait } : {}),
  });
}

/** A stream that takes everything and keeps nothing. */
function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

/** How a task's result is named in the summary's sources (and in messages about it). */
export function resultLabel(taskId: string): string {
  return `task ${taskId}`;
}

/**
 * What the output's rows are: the tasks' own (checked now), those of every other source
 * (a run's results from the ledger, checked before), and each task's numbers that have
 * none: a task's `total` less the rows its result gave.
 */
export function resultCounts(
  tasks: readonly Task[],
  sources: readonly Pick<SourceSummary, "label" | "rows">[],
): Required<Omit<ResultCounts, "waiting">> {
  const rows = new Map(tasks.map((task) => [resultLabel(task.id), 0]));
  let reused = 0;
  for (const source of sources) {
    if (rows.has(source.label)) rows.set(source.label, source.rows);
    else reused += source.rows;
  }
  const noResult = tasks.reduce((sum, task) => sum + Math.max(0, task.total - rows.get(resultLabel(task.id))!), 0);
  return { checked: [...rows.values()].reduce((sum, n) => sum + n, 0), reused, noResult };
}

/** The one product of the tasks (of a run's output, whose tasks may be none); tasks of different products have different result columns. */
export function productOf(tasks: readonly Task[], staged?: Pick<StagedResults, "product">): ServiceType {
  if (tasks.length === 0 && staged) return staged.product;
  const products = new Set(tasks.map((task) => canonicalServiceType(task.product) ?? task.product));
  const [product] = products;
  const canonical = product === undefined ? undefined : canonicalServiceType(product);
  if (products.size !== 1 || canonical === undefined) {
    throw new UsageError(`These tasks are of different products (${[...products].join(", ")}), whose result columns differ.`, {
      hint: "Download each product's tasks separately.",
    });
  }
  return canonical;
}

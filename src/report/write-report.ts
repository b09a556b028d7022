import type { ChangesSummary } from "../ledger/changes.js";
import { AtomicFile } from "../results/atomic-file.js";
import type { ResultSummary } from "../results/index.js";
import type { TaskOrigin } from "../tasks/origins.js";
import type { RunRecord } from "../store/store.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { renderReport } from "./html.js";
import { reportModel, type ReportModel } from "./model.js";
import { runFacts } from "./run-facts.js";

/** What a download learned that a report shows. */
export interface ReadResults {
  summary: Pick<ResultSummary, "rows" | "signal" | "carrier" | "sources" | "serviceType" | "path">;
  tasks: readonly Task[];
}

export interface ReportDeps {
  /** What the store knows of the tasks' runs. */
  origins: (ids: readonly string[]) => Promise<ReadonlyMap<string, TaskOrigin>>;
  /** Per-number prices (micro-USD). */
  prices: Record<ServiceType, number>;
  now: () => number;
}

/** What a report knows beyond the tasks' results and what the store knows of them. */
export interface ReportContext {
  /** What changed since each number's previous check (a run's own report, with the ledger on). */
  changes?: ChangesSummary | undefined;
  /** The run whose output this is: a run whose every number came from the ledger has no task to find it by. */
  run?: RunRecord | undefined;
  /** The lists of runs whose reused rows could not be read again (see ReportInput.unreadLists). */
  unreadLists?: readonly string[];
}

/** The HTML report of finished tasks whose results were just read, with what their run adds (see ReportContext). */
export async function reportHtml(deps: ReportDeps, read: ReadResults, context: ReportContext = {}): Promise<string> {
  return renderReport(await modelOf(deps, read, context));
}

/** The report of a chain: each product's results (its run's tasks and reused rows), in chain order, with what its run adds. */
export async function chainReportHtml(
  deps: ReportDeps,
  products: ReadonlyArray<{ read: ReadResults; context: ReportContext }>,
): Promise<string> {
  const models: ReportModel[] = [];
  for (const { read, context } of products) models.push(await modelOf(deps, read, context));
  return renderReport(models[0]!, models.slice(1));
}

async function modelOf(deps: ReportDeps, read: ReadResults, context: ReportContext): Promise<ReportModel> {
  const { changes, run, unreadLists } = context;
  return reportModel({
    product: read.summary.serviceType,
    tasks: read.tasks,
    results: read.summary,
    prices: deps.prices,
    runs: runFacts(await deps.origins(read.tasks.map((task) => task.id)), run ? [run] : []),
    ...(changes ? { changes } : {}),
    ...(unreadLists ? { unreadLists } : {}),
    generatedAt: new Date(deps.now()).toISOString(),
    ...(read.summary.path === undefined ? {} : { resultsPath: read.summary.path }),
  });
}

/**
 * Writes `html` to `path` so that it appears whole or not at all, like every file
 * bulkcheck writes.
 * @throws DestinationExistsError when `path` exists and `force` is false.
 */
export async function writeReportFile(path: string, html: string, force: boolean): Promise<void> {
  await AtomicFile.write(path, { force }, (out) => {
    out.end(html);
  });
}

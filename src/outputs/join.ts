import { UsageError } from "../errors.js";
import { LIBPHONENUMBER_VERSION, type PreparationSettings } from "../prepare/settings.js";
import { runSettings } from "../tasks/origins.js";
import { AtomicFile, listBeingRead } from "../results/atomic-file.js";
import { joinCounts, joinResults, statusTable, type JoinOutcome, type LaterColumns } from "./join-rows.js";
import { readResults, resultMap, type ResultSource } from "../results/read-results.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { billing } from "../tasks/billing.js";
import { productOf, recordedAfter, taskSources, type DownloadDeps, type UnsentNumbers } from "../tasks/download.js";
import { withTransferRetries } from "../tasks/fetch-result.js";
import { runTable } from "../tasks/summary-sheet.js";
import { checkJoinSource } from "./join-source.js";
import { assertReadableTwice } from "../prepare/input-source.js";
import type { Scope, Store } from "../store/store.js";
import { withTempDir } from "../temp-dir.js";
import { runResults, type WholeRunEvent } from "./whole-runs.js";
import { isStdout, type OutputDeps, type OutputOfRun } from "./output-files.js";

export type JoinDeps = DownloadDeps;

/**
 * A join as a command asks for it, built once from its flags (download --join, submit and
 * retry-failed --wait -o --join): the tasks, the list to join them to, and where to write.
 */
export interface JoinRequest extends Omit<JoinTarget, "checkedAt" | "reused" | "unsent" | "product" | "settings"> {
  /** The task ids given; a run's own output gives its tasks. */
  taskIds: readonly string[];
}

/** What a join tells as it goes. */
export type JoinEvent = WholeRunEvent;

export interface JoinRequestDeps extends JoinDeps {
  store: Store;
  scope: Scope;
  now: () => number;
  onEvent?: (event: JoinEvent) => void;
}

/**
 * Writes the source rows with the results of whole runs beside them: a run's own output
 * (`deps.staged`) has its whole run staged already; tasks given by id are completed to
 * their whole runs (see runResults), so no row that was checked and paid for is written
 * as `no_result`, and the rows of numbers the runs reused or left waiting say so. The
 * source must be a file that can be read again (the join reads it while the results are
 * matched). A result the store has no check date for is dated now.
 */
export async function writeJoin(request: JoinRequest, deps: JoinRequestDeps): Promise<JoinOutcome> {
  await assertReadableTwice(request.sourcePath, "--join");
  const { taskIds: ids, ...target } = request;
  const now = new Date(deps.now()).toISOString();
  const { staged } = deps;
  if (staged) {
    return joinTaskResults(deps, ids, {
      ...target,
      checkedAt: (task) => staged.checkedAt(task),
      product: staged.product,
      settings: staged.settings,
      ...(staged.unsent ? { unsent: [staged.unsent] } : {}),
    });
  }
  return withTempDir(async (dir) => {
    const run = await runResults({ ...deps, dir }, ids, () => Promise.resolve(target.sourcePath));
    if (run.added.length > 0) deps.onEvent?.({ type: "whole-run", given: ids, added: run.added });
    return joinTaskResults(deps, run.ids, {
      ...target,
      checkedAt: (task) => run.checkedAt.get(task.id) ?? now,
      ...(run.reused.length > 0 ? { reused: run.reused } : {}),
      unsent: run.unsent,
    });
  });
}

/** -o FILE --join as a command asks for it: the tasks, the list, and the output (a file as given, or stdout). */
export interface JoinedOutputRequest {
  taskIds: readonly string[];
  /** The list joined to, absolute. */
  sourcePath: string;
  /** -o: a file as the user gave it, or `-`/undefined for stdout. */
  output: string | undefined;
  /** --force: replace the output, and join to a list changed since it was submitted. */
  force: boolean;
  format: "csv" | "xlsx";
  safeCsv: boolean;
  /** A chain's later products' columns, beside the first's. */
  later?: LaterColumns;
}

/**
 * The join written to its output (stdout through a file of its own, see OutputDeps.stage),
 * told as an event once written; a run's own output joins its staged results.
 */
export async function writeJoinedOutput(join: JoinedOutputRequest, run: OutputOfRun, deps: OutputDeps): Promise<JoinOutcome> {
  const { output, force, ...request } = join;
  const outcome = await deps.stage(
    output,
    (path, mode) =>
      writeJoin(
        {
          ...request,
          path,
          ...(mode === undefined ? {} : { mode }),
          force: isStdout(output) || force,
          acceptChangedSource: force,
          prices: deps.prices,
        },
        {
          ...deps.download,
          ...(run.staged ? { staged: run.staged } : {}),
          store: deps.store,
          scope: deps.scope,
          now: deps.now,
          onEvent: (event) => deps.onEvent({ ...event, output: "join" }),
        },
      ),
    "data",
  );
  deps.onEvent({
    type: "joined",
    outcome,
    path: isStdout(output) ? undefined : output,
    format: join.format,
    ...(join.later ? { laterProducts: join.later.products } : {}),
  });
  return outcome;
}

export interface JoinTarget {
  /** The list the tasks were submitted from (absolute path). */
  sourcePath: string;
  /** The file to write (atomically). */
  path: string;
  /** Replace a file that exists. */
  force: boolean;
  /** `csv` (default): the source's own text format; `xlsx`: an Excel workbook. */
  format?: "csv" | "xlsx";
  /** Per-number prices, for what the run cost in an xlsx Summary sheet. */
  prices?: Record<ServiceType, number>;
  /** Join even with another file than the journalled one, or one changed since the submit (with a warning). */
  acceptChangedSource?: boolean;
  /** The written file's mode (default: kept from a file it replaces, else the umask's). */
  mode?: number;
  /** --safe-csv: neutralise the source's formula-like cells too (the result's always are). */
  safeCsv?: boolean;
  /** When each task's result was checked: the join's bc_checked_at. */
  checkedAt: (task: Task) => string;
  /** A run's results the ledger serves (its reused numbers), joined beside its tasks'. */
  reused?: readonly ResultSource[];
  /** The runs' numbers none of their tasks was given: their rows are `reused` or `waiting`. */
  unsent?: readonly UnsentNumbers[];
  /** The run's product and settings, when every result comes from the ledger (no task to find them by). */
  product?: ServiceType;
  settings?: PreparationSettings;
  /** A chain's later products' columns, after the first product's. */
  later?: LaterColumns;
}

/**
 * Downloads the tasks' results (or reads the staged ones) into memory (identifier →
 * columns) and writes the source rows with the result columns beside them, reading the source with the
 * preparation settings the journal kept for these tasks. When the source is the list as
 * it was uploaded (see SourcePreparation), every result row must be one of its numbers.
 */
export async function joinTaskResults(deps: JoinDeps, ids: readonly string[], target: JoinTarget): Promise<JoinOutcome> {
  const { signal } = deps;
  const { settings, reproducible } = await preparationOf(deps, ids, target);
  const client = await deps.client();
  const tasks = deps.staged ? [...deps.staged.tasks] : await Promise.all(ids.map((id) => client.checkTask(id)));
  const serviceType = productOf(tasks, target.product ? { product: target.product } : deps.staged);
  const results = await recordedAfter(
    deps,
    withTransferRetries(async () => {
      const sources = (await taskSources(deps, client, tasks)).map((source) =>
        source.task ? { ...source, checkedAt: target.checkedAt(tasks.find((task) => task.id === source.task!.id)!) } : source,
      );
      return resultMap(readResults([...sources, ...(deps.staged ? [] : (target.reused ?? []))], { serviceType, signal, checkedAt: true }));
    }, deps),
  );
  const { prices } = target;
  const destination = {
    force: target.force,
    // The source is read while the file is written: it may not be the file written, under any name.
    reading: [listBeingRead(target.sourcePath)],
    ...(target.mode === undefined ? {} : { mode: target.mode }),
  };
  const summary = await AtomicFile.write(target.path, destination, (out) =>
    joinResults({
      sourcePath: target.sourcePath,
      settings,
      results,
      out,
      signal,
      format: target.format ?? "csv",
      safeCsv: target.safeCsv ?? false,
      ...(reproducible ? { uploadedBy: tasks.map((task) => task.id) } : {}),
      ...(target.unsent ? { unsent: target.unsent } : {}),
      ...(target.later ? { later: target.later } : {}),
      summarySheet: (joined) => [
        runTable({
          product: serviceType,
          tasks,
          bill: prices && billing(tasks, prices),
          counts: joinCounts(joined),
        }),
        statusTable(joined),
        ...(target.later?.summary?.(prices) ?? []),
      ],
    }),
  );
  return { summary, serviceType, tasks };
}

/** How the tasks' list was prepared, and whether preparing the source again gives exactly what was uploaded. */
interface SourcePreparation {
  settings: PreparationSettings;
  /** The journalled file, unchanged, prepared by this libphonenumber-js: its kept numbers are the ones uploaded. */
  reproducible: boolean;
}

/**
 * The settings every task was prepared with, which must be the same for all of
 * them, once the source is known to be the list they were submitted from.
 */
async function preparationOf(deps: JoinDeps, ids: readonly string[], target: JoinTarget): Promise<SourcePreparation> {
  let settings: PreparationSettings | undefined;
  const origins = await deps.origins(ids);
  for (const id of ids) {
    const preparation = runSettings(origins.get(id)?.run);
    if (!preparation) {
      throw new UsageError(`There is no local record of how task ${id} was prepared, so its rows cannot be matched exactly.`, {
        hint:
          "Join on the machine (and profile's config directory) that submitted it, or download the plain result: bulkcheck download " + id,
      });
    }
    if (settings && JSON.stringify(settings) !== JSON.stringify(preparation)) {
      throw new UsageError("These tasks were prepared from different lists or with different options; join them one at a time.");
    }
    settings = preparation;
  }
  if (!settings) {
    if (target.product && target.settings) settings = target.settings;
    else throw new UsageError("No task ids given.");
  }
  const unchanged = await checkJoinSource([...origins.values()], {
    sourcePath: target.sourcePath,
    acceptChanged: Boolean(target.acceptChangedSource),
    ...(deps.onWarning ? { onWarning: deps.onWarning } : {}),
  });
  const sameLibrary = settings.libphonenumber.version === LIBPHONENUMBER_VERSION;
  if (!sameLibrary) {
    deps.onWarning?.(
      `the list was prepared with libphonenumber-js ${settings.libphonenumber.version}, this is ${LIBPHONENUMBER_VERSION}: a few numbers may not match.`,
    );
  }
  return { settings, reproducible: unchanged && sameLibrary };
}

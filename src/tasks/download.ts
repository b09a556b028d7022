import type { ApiClient } from "../api/types.js";
import { UsageError } from "../errors.js";
import type { Journal } from "../journal/journal.js";
import { writeResults, type OutputFormat, type ResultSummary } from "../results/index.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { excludedBeforeUpload, type ExcludedBeforeUpload } from "./billing.js";
import { openTaskResult, withTransferRetries } from "./fetch-result.js";

export interface DownloadDeps {
  /** Built on first use: what fails before any request (a missing journal record) needs no API key. */
  client: () => Promise<Pick<ApiClient, "checkTask" | "openResult">>;
  journal: Pick<Journal, "findByTaskId">;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  /** A transfer broke midway and starts again with a fresh link. */
  onRestart?: (error: Error) => void;
}

export interface DownloadTarget {
  /** The file to write (atomically). */
  path: string;
  /** Replace a file that exists. */
  force: boolean;
  format: OutputFormat;
  /** Colour in a boxed table. */
  colour: boolean;
  /** The terminal width a boxed table fits into. */
  tableWidth?: number | undefined;
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
  const checked = await Promise.all(taskIds.map((id) => client.checkTask(id)));
  const tasks = new Map(checked.map((task) => [task.id, task]));
  const serviceType = productOf(checked);
  const sources = checked.map((task) => {
    // The check just made serves the first open; a restarted transfer checks again for a fresh link.
    let initial: Task | undefined = task;
    return {
      label: resultLabel(task.id),
      ...(task.success_cnt === undefined ? {} : { expectedRows: task.success_cnt }),
      open: () => {
        const first = initial;
        initial = undefined;
        return openTaskResult(task.id, {
          client,
          sleep: deps.sleep,
          signal: deps.signal,
          initial: first,
          onTask: (fresh) => tasks.set(fresh.id, fresh),
        });
      },
    };
  });
  const summary = await withTransferRetries(
    () =>
      writeResults(
        sources,
        { path: target.path, force: target.force },
        {
          serviceType,
          format: target.format,
          signal: deps.signal,
          colour: target.colour,
          tableWidth: target.tableWidth,
        },
      ),
    deps,
  );
  const excluded = await excludedBeforeUpload(deps.journal, taskIds);
  return { summary, tasks: [...tasks.values()], excluded };
}

/** How a task's result is named in the summary's sources (and in messages about it). */
export function resultLabel(taskId: string): string {
  return `task ${taskId}`;
}

/** The one product of the tasks; tasks of different products have different result columns. */
export function productOf(tasks: readonly Task[]): ServiceType {
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

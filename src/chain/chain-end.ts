import { pipeline } from "node:stream/promises";
import { AtomicFile } from "../results/atomic-file.js";
import { renderXlsx } from "../results/format-xlsx.js";
import { writeRows } from "../results/render.js";
import { identifierKey } from "../spec/identifier-key.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import { writeJoinedOutput } from "../outputs/join.js";
import { isStdout, writeChainReport, type MergedOutput, type OutputDeps } from "../outputs/output-files.js";
import { wantsChanges } from "../outputs/outputs-request.js";
import { ChangesTally, combinedChanges, type ChangesSummary } from "../ledger/changes.js";
import { writeTable } from "../ledger/export.js";
import { PRODUCT_COLUMN_PREFIX } from "./chain.js";
import type { OutputsRequest } from "../outputs/outputs-request.js";
import type { RunEndDeps } from "../outputs/run-end.js";
import type { RunOutputs } from "../outputs/run-outputs.js";
import { failRun, finishRun } from "../run/submit-run.js";
import type { RunOutcome } from "../run/submit-request.js";
import { billing } from "../tasks/billing.js";
import { runTable, type ResultCounts } from "../tasks/summary-sheet.js";
import { chainColumns, type ChainColumns } from "./chain-columns.js";
import { stagedRows } from "./selection.js";
import type { ChainOutcome, StepOutcome } from "./submit-chain.js";

/** What the end of a chain tells, beside what writing its output tells. */
export type ChainEndEvent =
  /** The merged rows of every product were written (to stdout when `path` is undefined). */
  | { type: "chain merged"; rows: number; columns: readonly string[]; path: string | undefined }
  /** With --wait and nothing to write: every product's tasks have finished. */
  | { type: "chain done"; taskIds: readonly string[] };

export interface ChainEndDeps extends Omit<RunEndDeps, "outputs" | "onEvent"> {
  /** Each product's results on their way, in chain order. */
  outputs: readonly RunOutputs[];
  onEvent: (event: Parameters<RunEndDeps["onEvent"]>[0] | ChainEndEvent) => void;
}

/**
 * Ends a chain whose products' tasks have finished: writes its output with every product's
 * columns (-o merged, or joined to the list; a product whose task failed, `failed` in its status
 * column: see ChainOutcome.failed), then finishes every product's run that did not fail and removes
 * their staging. An output that cannot be written fails the runs when the results are in the
 * ledger (the next run of the chain writes them without paying again); without it they stay
 * open, to be carried on.
 */
export async function endChain(chain: ChainOutcome, request: OutputsRequest, output: unknown, deps: ChainEndDeps): Promise<void> {
  const steps = [chain.first, ...chain.later];
  try {
    await writeChainOutput(chain, request, deps);
  } catch (error) {
    if (request.ledger) for (const step of steps) await failRun(deps.store, step.outcome, deps.now, error);
    throw error;
  }
  // A first product that went on without its failed tasks fails its run: the next run of the chain checks their numbers.
  await (chain.firstFailed
    ? failRun(deps.store, chain.first.outcome, deps.now, chain.firstFailed)
    : finishRun(deps.store, chain.first.outcome, deps.now, output));
  for (const step of chain.later) await finishRun(deps.store, step.outcome, deps.now, output);
  // The runs part by part end with the chain's: until it has written its output, a chain carried on finds them.
  for (const early of [...chain.later, ...(chain.failed ? [chain.failed] : [])].flatMap((step) => step.early)) {
    await finishRun(deps.store, early, deps.now, output);
  }
  for (const outputs of deps.outputs) await outputs.finish(request.retentionSeconds);
}

async function writeChainOutput(chain: ChainOutcome, request: OutputsRequest, deps: ChainEndDeps): Promise<void> {
  const { output, force, report } = request;
  const steps = [chain.first, ...chain.later];
  const changes = wantsChanges(request) ? await chainChanges(steps, request, deps) : undefined;
  const withReport = async () => {
    if (report === undefined) return;
    const products = steps.map((step, index) => ({
      taskIds: taskIds(step),
      run: { staged: step.staged, changes: changes?.[index], record: step.outcome.run },
    }));
    await writeChainReport(products, report, force, deps);
  };
  if (output === undefined) {
    if (report !== undefined) await withReport();
    else deps.onEvent({ type: "chain done", taskIds: steps.flatMap(taskIds) });
    return;
  }
  const later = await chainColumns(chain.later, chain.failed, deps.download.signal);
  const { first } = chain;
  if (output.join) {
    const { sourcePath, safeCsv } = output.join;
    await deps.checkDestinations({ "-o": output.path, "--report": report }, [sourcePath]);
    await writeJoinedOutput(
      { taskIds: taskIds(first), sourcePath, output: output.path, force, format: output.format, safeCsv, later },
      { staged: first.staged, record: first.outcome.run },
      deps,
    );
  } else {
    await deps.checkDestinations({ "-o": output.path, "--report": report }, []);
    const merged = { path: output.path, format: output.format, force, table: deps.table };
    const written = await writeMergedChain(first, later, merged, deps);
    deps.onEvent({ type: "chain merged", ...written, path: isStdout(output.path) ? undefined : output.path });
  }
  await withReport();
}

/**
 * What changed in every product's results since each number's previous check, as one table
 * (--changes; each later product's columns named as the output names them, `activity_activated`)
 * and told as one summary (combinedChanges). The list's own changes are the first product's.
 * Returns each product's own summary, for its part of the report.
 */
async function chainChanges(steps: readonly StepOutcome[], request: OutputsRequest, deps: ChainEndDeps): Promise<ChangesSummary[]> {
  const tallies = steps.map(() => new ChangesTally());
  const prefixes = steps.map((step, index) => (index === 0 ? "" : `${PRODUCT_COLUMN_PREFIX[step.product]}_`));
  const tables: AsyncIterable<readonly string[]>[] = [];
  for (const [index, step] of steps.entries()) {
    const listed = index === 0;
    const options = { listRows: listed && Boolean(request.changes?.listRows), list: listed, columnPrefix: prefixes[index]! };
    tables.push(await deps.outputs[index]!.changesTable(step.outcome, tallies[index]!, options));
  }
  async function* rows(): AsyncGenerator<readonly string[]> {
    for (const [index, table] of tables.entries()) {
      let header = true;
      for await (const row of table) {
        // One header: the first product's.
        if (!header || index === 0) yield row;
        header = false;
      }
    }
  }
  if (request.changes) await writeTable(rows(), request.changes.format, request.changes.destination);
  else for await (const _row of rows()) void _row;
  const summaries = tallies.map((tally) => tally.summary());
  deps.onEvent({ type: "changes", summary: combinedChanges(summaries.map((summary, index) => ({ summary, prefix: prefixes[index]! }))) });
  return summaries;
}

function taskIds(step: StepOutcome): string[] {
  return step.outcome.results.map((result) => result.task.id);
}

/**
 * The chain's results as merged rows: the first product's (identifier, its columns,
 * checked_at) with the later products' columns beside them, then a row for each number
 * only a later product has a result for (no condition, and no result of the first).
 */
async function writeMergedChain(
  first: StepOutcome,
  later: ChainColumns,
  output: Omit<MergedOutput, "report">,
  deps: Pick<OutputDeps, "stage" | "download" | "prices">,
): Promise<{ rows: number; columns: readonly string[] }> {
  const { signal } = deps.download;
  const tasks = first.outcome.results.map((result) => result.task);
  let rows = 0;
  let columns: readonly string[] = [];
  async function* table(): AsyncGenerator<readonly string[]> {
    const seen = new IdentifierSet();
    let width = 0;
    for await (const row of stagedRows(first.staged, { checkedAt: true, signal })) {
      if (columns.length === 0) {
        columns = [...row, ...later.names];
        width = row.length - 1;
        yield columns;
        continue;
      }
      seen.set(identifierKey(row[0]!), 0);
      rows++;
      yield [...row, ...later.values(row[0], "checked")];
    }
    const blank = new Array<string>(width).fill("");
    for (const identifier of later.identifiers()) {
      const key = identifierKey(identifier);
      if (seen.has(key)) continue;
      seen.set(key, 0);
      rows++;
      yield [identifier, ...blank, ...later.values(identifier, "no_result")];
    }
  }
  const toStdout = isStdout(output.path);
  const kind = output.format === "table" ? "table" : output.format === "jsonl" ? "json-lines" : "data";
  await deps.stage(
    output.path,
    (path, mode) =>
      AtomicFile.write(path, { force: toStdout || output.force, ...(mode === undefined ? {} : { mode }) }, async (out) => {
        if (output.format === "xlsx") {
          const firstRun = runTable({
            product: first.product,
            tasks,
            bill: billing(tasks, deps.prices),
            counts: productCounts(first.outcome),
          });
          await pipeline(renderXlsx(table(), { summary: () => [firstRun, ...later.summary(deps.prices)] }), out, { end: false, signal });
        } else
          await writeRows(table(), out, {
            format: output.format,
            colour: output.table.colour,
            tableWidth: output.table.width,
            terminal: toStdout && output.table.terminal,
            end: false,
            signal,
          });
      }),
    kind,
  );
  return { rows, columns };
}

/**
 * What a product's run of a chain checked, reused, got no result for and left waiting, of its
 * `numbers` (its selection), from its plan and its tasks, and those of its runs part by part
 * (`early`), which checked the numbers they uploaded.
 */
export function productCounts(
  outcome: Pick<RunOutcome, "plan" | "results">,
  early: readonly Pick<RunOutcome, "results">[] = [],
  numbers = outcome.plan.kept,
): Required<ResultCounts> & { numbers: number } {
  const { plan } = outcome;
  const checked = [...early, outcome].flatMap((run) => run.results).reduce((sum, result) => sum + (result.task.success_cnt ?? 0), 0);
  const waiting = plan.waiting ?? 0;
  return { numbers, checked, reused: plan.reused, noResult: Math.max(0, numbers - checked - plan.reused - waiting), waiting };
}

import { join } from "node:path";
import { mkdir } from "node:fs/promises";
import type { PrepareResult } from "../prepare/index.js";
import type { RunPlan } from "../run/plan.js";
import type { RunOutcome, SubmitRequest, SubmitRunDeps } from "../run/submit-request.js";
import { submitRun } from "../run/submit-run.js";
import type { ServiceType } from "../spec/products.js";
import type { StagedResults } from "../tasks/download.js";
import type { RunSource } from "../store/store.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import { TaskFailedError } from "../errors.js";
import { count } from "../format-count.js";
import { stepKey, type ChainStep } from "./chain.js";
import { selectedParts, selectNumbers, type Selection } from "./selection.js";

/** What a chain needs for each of its products' runs. */
export interface ChainDeps {
  /** The run deps of a product (its price, its events, its results staged as its tasks finish); `index` 0 is the first product. */
  step(product: ServiceType, index: number): Promise<SubmitRunDeps>;
  /** A product's run, its tasks finished, as its output reads it (see RunOutputs.results). */
  results(index: number, outcome: RunOutcome): Promise<StagedResults>;
  onEvent(event: ChainEvent): void;
}

/** What a chain tells as it goes, beside each product's run's own events. */
export type ChainEvent =
  /**
   * A later product's run begins: on `selected` of the `kept` numbers the run keeps (all of them
   * without a condition); with --dry-run (`upperBound`), before any result is in, on every one.
   */
  | { type: "step"; step: ChainStep; index: number; selected: number; kept: number; upperBound: boolean }
  /** Before a real run's first upload: a later product's plan on every number, its upper bound. */
  | { type: "bound"; step: ChainStep; plan: RunPlan };

/** One product's run of a chain, its tasks finished. */
export interface StepOutcome {
  product: ServiceType;
  outcome: RunOutcome;
  staged: StagedResults;
}

export interface ChainOutcome {
  first: StepOutcome;
  later: (StepOutcome & { step: ChainStep; selection: Selection })[];
  /**
   * A later product whose task failed (its run failed with it): the chain stops there, and the
   * output is still written, the earlier products' results in it and this product's numbers `failed`.
   */
  failed?: { step: ChainStep; selection: Selection; error: TaskFailedError };
  /**
   * The first product's tasks that failed: the chain went on without their numbers (`failed` for
   * the first product, `earlier_failed` for the later ones), and the first product's run fails
   * once the output is written, so that the next run of the chain checks them again.
   */
  firstFailed?: TaskFailedError;
}

/**
 * A run of several products (`submit --type A --then B[:COLUMN=VALUE,...]`): the first
 * product's run of the list as `submitRun` does it, waited for; then each later product's
 * run of the numbers its condition selects from the earlier results, as a run of its own
 * (its plan, ledger, claims and keys: its identity is the list's with the chain up to it, so
 * a chain carried on finds each product's run, and one killed between products pays nothing
 * twice). --max-cost covers the whole chain: each later run may spend what the earlier ones
 * left. No run is finished here: the caller writes the output, then ends them all
 * (chain-end.ts). Undefined for a dry run, after every product's plan (the later ones'
 * an upper bound: every number the list keeps, less the product's own fresh results).
 */
export async function submitChain(request: SubmitRequest, steps: readonly ChainStep[], deps: ChainDeps): Promise<ChainOutcome | undefined> {
  const firstDeps = await deps.step(request.product, 0);
  const laterDeps: SubmitRunDeps[] = [];
  for (const [index, step] of steps.entries()) laterDeps.push(await deps.step(step.product, index + 1));
  let prepared: PrepareResult | undefined;
  /** Each later product's upper bound, as planned before the first product reserved anything. */
  let bounds: number[] = [];
  const outcome = await submitRun(
    { ...request, keepFailedTasks: true },
    {
      ...firstDeps,
      onPrepared: async (result) => {
        prepared = result;
        await firstDeps.onPrepared?.(result);
      },
      laterMicros: async () => {
        bounds = await upperBounds(request, steps, prepared!, { ...deps, firstDeps, laterDeps });
        return bounds.reduce((sum, micros) => sum + micros, 0);
      },
    },
  );
  if (!outcome || !prepared) return undefined;
  const list = prepared;
  const first: StepOutcome = { product: request.product, outcome, staged: await deps.results(0, outcome) };
  const leftOut = first.staged.unsent?.failed;
  const firstFailed = leftOut && firstFailedError(request, outcome, leftOut.size);
  const done: StepOutcome[] = [first];
  const later: ChainOutcome["later"] = [];
  let spent = outcome.plan.reservationMicros;
  for (const [index, step] of steps.entries()) {
    const stepDeps = laterDeps[index]!;
    const selection = { ...(await selectionOf(step, done, firstDeps.signal)), ...(leftOut ? { leftOut } : {}) };
    const dir = await stepDir(firstDeps, index);
    const parts = await selectedParts(list.chunks, selection, dir);
    deps.onEvent({ type: "step", step, index: index + 1, selected: numbersIn(parts), kept: numbersIn(list.chunks), upperBound: false });
    const bound = bounds[index];
    let stepOutcome: RunOutcome | undefined;
    try {
      stepOutcome = await submitRun(
        stepRequest(request, steps, index, { ...list, chunks: parts }, outcome.run.source, spent, stepDeps.limits.minTaskSize),
        {
          ...stepDeps,
          workDir: dir,
          // Agreed to with the first product's question when within its upper bound; asked again only when over it.
          ...(stepDeps.confirm && bound !== undefined
            ? { confirm: (micros, ...rest) => (micros <= bound ? Promise.resolve(true) : stepDeps.confirm!(micros, ...rest)) }
            : {}),
        },
      );
    } catch (error) {
      // Its numbers have no result, ever; the earlier products' results are written all the same.
      if (!(error instanceof TaskFailedError)) throw error;
      return { first, later, failed: { step, selection, error }, ...(firstFailed ? { firstFailed } : {}) };
    }
    if (!stepOutcome) continue;
    spent += stepOutcome.plan.reservationMicros;
    const staged = await deps.results(index + 1, stepOutcome);
    done.push({ product: step.product, outcome: stepOutcome, staged });
    later.push({ product: step.product, outcome: stepOutcome, staged, step, selection });
  }
  return { first, later, ...(firstFailed ? { firstFailed } : {}) };
}

/**
 * What each later product would reserve if its condition selected every number the list
 * keeps (less its own fresh results): planned as a dry run of its run, and told as it goes.
 */
async function upperBounds(
  request: SubmitRequest,
  steps: readonly ChainStep[],
  list: PrepareResult,
  deps: ChainDeps & { firstDeps: SubmitRunDeps; laterDeps: readonly SubmitRunDeps[] },
): Promise<number[]> {
  const bounds: number[] = [];
  const kept = numbersIn(list.chunks);
  for (const [index, step] of steps.entries()) {
    deps.onEvent({ type: "step", step, index: index + 1, selected: kept, kept, upperBound: true });
    let reservation = 0;
    const stepDeps = deps.laterDeps[index]!;
    const { maxCostMicros: _countedByTheFirstProduct, ...bound } = stepRequest(
      request,
      steps,
      index,
      list,
      {},
      0,
      stepDeps.limits.minTaskSize,
    );
    await submitRun(
      // Planned as a new run would be (the product's run of this chain, open after a kill, has its own list: the selection).
      { ...bound, command: { ...bound.command, chain: `${bound.command.chain}/upper-bound` }, dryRun: true },
      {
        ...stepDeps,
        workDir: await stepDir(deps.firstDeps, index, "bound"),
        onEvent: (event) => {
          if (event.type === "plan") reservation = event.plan.reservationMicros;
          // A dry run of the chain is told as any dry run; before a real run's first upload, only the bound's plan.
          if (request.dryRun) stepDeps.onEvent(event);
          else if (event.type === "plan") deps.onEvent({ type: "bound", step, plan: event.plan });
        },
      },
    );
    bounds.push(reservation);
  }
  return bounds;
}

/**
 * A later product's run of `list` (the numbers selected for it): the first product's request
 * for another product, its identity the list's with the chain up to it, its keys its own, and
 * what --max-cost leaves after `spent`. Numbers too few for a task wait for a later run
 * (as under --pad never): a selection smaller than a task's minimum cannot be padded from itself.
 */
function stepRequest(
  request: SubmitRequest,
  steps: readonly ChainStep[],
  index: number,
  list: PrepareResult,
  source: RunSource,
  spent: number,
  minTaskSize: number,
): SubmitRequest {
  const step = steps[index]!;
  const { userKey: _keysOfTheFirstProductOnly, ...shared } = request;
  return {
    ...shared,
    ...(numbersIn(list.chunks) < minTaskSize ? { pad: "never" as const } : {}),
    product: step.product,
    command: { ...request.command, product: step.product, chain: stepKey(request.product, steps, index) },
    lists: () => Promise.resolve({ value: list, source }),
    ...(request.maxCostMicros === undefined ? {} : { maxCostMicros: Math.max(0, request.maxCostMicros - spent) }),
  };
}

/** A private directory for a later product's parts. */
async function stepDir(deps: SubmitRunDeps, index: number, kind = "then"): Promise<string> {
  const dir = join(deps.workDir, `${kind}-${index + 1}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

function numbersIn(parts: readonly { count: number }[]): number {
  return parts.reduce((sum, part) => sum + part.count, 0);
}

/** The numbers a later product is checked on: by its condition, from the results of the earlier product it reads. */
async function selectionOf(step: ChainStep, done: readonly StepOutcome[], signal: AbortSignal): Promise<Selection> {
  const { condition } = step;
  if (!condition) return { answered: new IdentifierSet() };
  const source = done.find((earlier) => earlier.product === condition.product)!;
  return selectNumbers(condition, source.staged, signal);
}

/** The first product's tasks that failed, which the chain went on without: what happened, and how to check their numbers. */
function firstFailedError(request: SubmitRequest, outcome: RunOutcome, numbers: number): TaskFailedError {
  const ids = outcome.results.filter((result) => result.task.status === "failed").map((result) => result.task.id);
  return new TaskFailedError(
    `${request.product}'s ${ids.length === 1 ? "task" : "tasks"} ${ids.join(", ")} failed (refunded in full): ${count(numbers)} numbers say failed, and no later product checked them (earlier_failed). The output has every other result.`,
    ids,
    { hint: `Run the same command again: it reuses every result and checks only those numbers again: ${request.resumeCommand}` },
  );
}

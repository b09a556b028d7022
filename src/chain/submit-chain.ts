import { join } from "node:path";
import { mkdir } from "node:fs/promises";
import type { PrepareResult } from "../prepare/index.js";
import type { RunPlan } from "../run/plan.js";
import type { RunOutcome, SubmitRequest, SubmitRunDeps } from "../run/submit-request.js";
import { submitRun } from "../run/submit-run.js";
import type { ServiceType } from "../spec/products.js";
import type { StagedResults } from "../tasks/download.js";
import { IdentifierSet } from "../spec/identifier-set.js";
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
  { type: "step"; step: ChainStep; index: number; selected: number; kept: number; upperBound: boolean };

/** One product's run of a chain, its tasks finished. */
export interface StepOutcome {
  product: ServiceType;
  outcome: RunOutcome;
  staged: StagedResults;
}

export interface ChainOutcome {
  first: StepOutcome;
  later: (StepOutcome & { step: ChainStep; selection: Selection })[];
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
  let prepared: PrepareResult | undefined;
  const plans: RunPlan[] = [];
  const planned = (runDeps: SubmitRunDeps): SubmitRunDeps => ({
    ...runDeps,
    onEvent: (event) => {
      if (event.type === "plan") plans.push(event.plan);
      runDeps.onEvent(event);
    },
  });
  const outcome = await submitRun(request, {
    ...planned(firstDeps),
    onPrepared: async (result) => {
      prepared = result;
      await firstDeps.onPrepared?.(result);
    },
  });
  if (!prepared) return undefined;
  const list = prepared;
  const first: StepOutcome | undefined = outcome && { product: request.product, outcome, staged: await deps.results(0, outcome) };
  const done: StepOutcome[] = first ? [first] : [];
  const later: ChainOutcome["later"] = [];
  const kept = list.chunks.reduce((sum, chunk) => sum + chunk.count, 0);
  for (const [index, step] of steps.entries()) {
    const stepDeps = await deps.step(step.product, index + 1);
    // Before any result is in (a dry run), the bound: every number the list keeps.
    const selection = first ? await selectionOf(step, done, firstDeps.signal) : { answered: new IdentifierSet() };
    const dir = join(firstDeps.workDir, `then-${index + 1}`);
    await mkdir(dir, { recursive: true });
    const parts = selection.selected ? await selectedParts(list.chunks, selection.selected, dir) : list.chunks;
    const selected = selection.selected ? parts.reduce((sum, part) => sum + part.count, 0) : kept;
    deps.onEvent({ type: "step", step, index: index + 1, selected, kept, upperBound: !first });
    const spent = plans.reduce((sum, plan) => sum + plan.reservationMicros, 0);
    const { userKey: _keysOfTheFirstProductOnly, ...shared } = request;
    const stepOutcome = await submitRun(
      {
        ...shared,
        product: step.product,
        command: { ...request.command, product: step.product, chain: stepKey(request.product, steps, index) },
        lists: () => Promise.resolve({ value: { ...list, chunks: parts }, source: outcome?.run.source ?? {} }),
        ...(request.maxCostMicros === undefined ? {} : { maxCostMicros: Math.max(0, request.maxCostMicros - spent) }),
      },
      { ...planned(stepDeps), workDir: dir },
    );
    if (!stepOutcome) continue;
    const staged = await deps.results(index + 1, stepOutcome);
    done.push({ product: step.product, outcome: stepOutcome, staged });
    later.push({ product: step.product, outcome: stepOutcome, staged, step, selection });
  }
  return first && { first, later };
}

/** The numbers a later product is checked on: by its condition, from the results of the earlier product it reads. */
async function selectionOf(step: ChainStep, done: readonly StepOutcome[], signal: AbortSignal): Promise<Selection> {
  const { condition } = step;
  if (!condition) return { answered: new IdentifierSet() };
  const source = done.find((earlier) => earlier.product === condition.product)!;
  return selectNumbers(condition, source.staged, signal);
}

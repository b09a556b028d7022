import { join } from "node:path";
import { mkdir } from "node:fs/promises";
import type { PrepareResult } from "../prepare/index.js";
import type { RunPlan } from "../run/plan.js";
import type { RunEvent, RunOutcome, SubmitRequest, SubmitRunDeps } from "../run/submit-request.js";
import { submitRun } from "../run/submit-run.js";
import type { ServiceType } from "../spec/products.js";
import type { StagedResults } from "../tasks/download.js";
import type { RunSource } from "../store/store.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import { addIdentifiers } from "../tasks/list-slice.js";
import { TaskFailedError } from "../errors.js";
import { count } from "../format-count.js";
import { stepKey, type ChainStep } from "./chain.js";
import { selectedParts, selectNumbers, type Selection } from "./selection.js";
import { PartByPart, type EarlyParts, type EarlyRun, type EarlyStop } from "./part-by-part.js";
import type { UploadResult } from "../tasks/submit.js";
import type { PreparationSettings } from "../prepare/settings.js";
import type { RunRecord } from "../store/store.js";
import { planOf } from "../run/run-record.js";
import { runIdentity } from "../run/identity.js";

/** What a chain needs for each of its products' runs. */
export interface ChainDeps {
  /** The run deps of a product (its price, its events, its results staged as its tasks finish); `index` 0 is the first product. */
  step(product: ServiceType, index: number): Promise<SubmitRunDeps>;
  /** A product's run, its tasks finished, as its output reads it (see RunOutputs.results). */
  results(index: number, outcome: RunOutcome): Promise<StagedResults>;
  /** Tasks of a product's runs whose results are staged, before the runs have ended (see RunOutputs.staged). */
  staged(index: number, results: readonly UploadResult[], settings: PreparationSettings): Promise<StagedResults>;
  onEvent(event: ChainEvent): void;
}

/** What a chain tells as it goes, beside each product's run's own events. */
export type ChainEvent =
  /**
   * A later product's run begins: on `selected` of the `kept` numbers the run keeps (all of them
   * without a condition); with --dry-run (`upperBound`), before any result is in, on every one.
   */
  | { type: "step"; step: ChainStep; index: number; selected: number; kept: number; upperBound: boolean; early?: number }
  /** Before a real run's first upload: a later product's plan on every number, its upper bound. */
  | { type: "bound"; step: ChainStep; plan: RunPlan }
  /** The second product's run of a group of the first product's parts, whose results are in (see PartByPart): its plan. */
  | { type: "parts"; step: ChainStep; parts: EarlyParts; plan: RunPlan; continued: boolean }
  /** Buying part by part stopped early: the numbers of these parts and the rest go to the chain's run of the product. */
  | { type: "parts stopped"; step: ChainStep; parts: EarlyParts; stop: EarlyStop };

/** One product's run of a chain, its tasks finished. */
export interface StepOutcome {
  product: ServiceType;
  outcome: RunOutcome;
  staged: StagedResults;
}

export interface ChainOutcome {
  first: StepOutcome;
  /** `early`: the product's runs part by part, before its run of the whole selection (see PartByPart). */
  later: (StepOutcome & { step: ChainStep; selection: Selection; early: readonly EarlyRun[]; selected: number })[];
  /**
   * A later product whose task failed (its run failed with it): the chain stops there, and the
   * output is still written, the earlier products' results in it and this product's numbers `failed`.
   */
  failed?: { step: ChainStep; selection: Selection; error: TaskFailedError; early: readonly EarlyRun[] };
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
  const startedAt = firstDeps.now();
  let prepared: PrepareResult | undefined;
  /** Each later product's upper bound, as planned before the first product reserved anything. */
  let bounds: number[] = [];
  /** What each later product's runs reserved so far: within its bound, no question is asked again. */
  const laterSpent = steps.map(() => 0);
  let firstRunning = true;
  /** The first product's parts that have a task, of how many: a group starts once every one has (PartByPartOptions.room). */
  const firstParts = { tasks: 0, of: Infinity, last: 0 };
  const early = partByPart(
    request,
    steps,
    { ...deps, firstDeps, laterDeps },
    {
      startedAt,
      firstRunning: () => firstRunning,
      lastPartSize: () => firstParts.last,
      room: async () => {
        while (firstRunning && firstParts.tasks < firstParts.of) await firstDeps.sleep(request.pollIntervalMs, firstDeps.signal);
      },
      prepared: () => prepared!,
      bound: () => bounds[0],
      spent: laterSpent,
    },
  );
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
      onEvent: (event) => {
        if (event.type === "plan") Object.assign(firstParts, { of: event.plan.parts.length, last: event.plan.parts.at(-1)?.count ?? 0 });
        if (event.type === "task") firstParts.tasks++;
        firstDeps.onEvent(event);
      },
      ...(early && {
        // A run part by part may hold the service's room: the first product's uploads wait for it.
        roomWillCome: () => early.buying(),
        onSucceeded: async (result, run) => {
          await firstDeps.onSucceeded?.(result, run);
          early.partDone(result, run);
        },
      }),
    },
  )
    .finally(() => {
      firstRunning = false;
    })
    .catch(async (error: unknown) => {
      early?.stop();
      await early?.settle().catch(() => undefined);
      throw error;
    });
  if (!outcome || !prepared) return undefined;
  const list = prepared;
  early?.end();
  const settling = early?.settle() ?? Promise.resolve([]);
  try {
    const first: StepOutcome = { product: request.product, outcome, staged: await deps.results(0, outcome) };
    // A group's run under way ends first: the chain's run of the product then plans knowing exactly what the groups bought.
    const earlyRuns = await settling;
    const leftOut = first.staged.unsent?.failed;
    const firstFailed = leftOut && firstFailedError(request, outcome, leftOut.size);
    const done: StepOutcome[] = [first];
    const later: ChainOutcome["later"] = [];
    let spent = outcome.plan.reservationMicros + laterSpent[0]!;
    for (const [index, step] of steps.entries()) {
      const stepDeps = laterDeps[index]!;
      const selection = { ...(await selectionOf(step, done, firstDeps.signal)), ...(leftOut ? { leftOut } : {}) };
      const dir = await stepDir(firstDeps, index);
      // The numbers its runs part by part that have ended uploaded (all selected) are theirs: this run checks the rest.
      const taken = index === 0 && earlyRuns.length > 0 ? await uploadedBy(earlyRuns) : undefined;
      const rest = await selectedParts(list.chunks, selection, dir, taken);
      // Too few left for a task of their own (rare: see PartByPart): the whole selection, what was bought part by part reused.
      const tooFew = numbersIn(rest) > 0 && numbersIn(rest) < stepDeps.limits.minTaskSize;
      const parts = tooFew ? await selectedParts(list.chunks, selection, dir) : rest;
      const boughtEarly = taken?.size ?? 0;
      const selected = numbersIn(rest) + boughtEarly;
      deps.onEvent({ type: "step", step, index: index + 1, selected, kept: numbersIn(list.chunks), upperBound: false, early: boughtEarly });
      let stepOutcome: RunOutcome | undefined;
      try {
        const stepRun = stepRequest(
          request,
          steps,
          index,
          { ...list, chunks: parts },
          outcome.run.source,
          spent,
          stepDeps.limits.minTaskSize,
        );
        stepOutcome = await submitRun(
          // --timeout counts from the chain's start.
          { ...stepRun, startedAt },
          {
            ...stepDeps,
            workDir: dir,
            ...withinBound(stepDeps, () => bounds[index], laterSpent, index),
            // Nothing left to check (none selected, or all bought part by part): the line above said so.
            ...(numbersIn(parts) === 0 ? { onEvent: (event: RunEvent) => void (event.type === "plan" || stepDeps.onEvent(event)) } : {}),
          },
        );
        if (stepOutcome) laterSpent[index]! += stepOutcome.plan.reservationMicros;
      } catch (error) {
        if (!(error instanceof TaskFailedError)) throw error;
        // Its numbers have no result, ever; the earlier products' results are written all the same.
        const before = index === 0 ? earlyRuns : [];
        return { first, later, failed: { step, selection, error, early: before }, ...(firstFailed ? { firstFailed } : {}) };
      }
      const before = index === 0 ? earlyRuns : [];
      if (!stepOutcome) continue;
      spent += stepOutcome.plan.reservationMicros;
      const earlyStaged = await deps.staged(
        index + 1,
        before.flatMap((run) => run.results),
        list.settings,
      );
      const staged = withEarly(await deps.results(index + 1, stepOutcome), earlyStaged);
      done.push({ product: step.product, outcome: stepOutcome, staged });
      later.push({ product: step.product, outcome: stepOutcome, staged, step, selection, early: before, selected });
    }
    return { first, later, ...(firstFailed ? { firstFailed } : {}) };
  } catch (error) {
    // A run part by part still under way ends before the command does (it uses the store).
    early?.stop();
    await settling.catch(() => undefined);
    throw error;
  }
}

/**
 * A later product's confirmation: agreed to with the first product's question while what the
 * product's runs reserve (`spent[index]` before this one) stays within its upper bound; asked
 * again only beyond it.
 */
function withinBound(
  stepDeps: SubmitRunDeps,
  bound: () => number | undefined,
  spent: readonly number[],
  index: number,
): Pick<SubmitRunDeps, "confirm"> {
  const { confirm } = stepDeps;
  if (!confirm) return {};
  return {
    confirm: (micros, ...rest) => {
      const limit = bound();
      return limit !== undefined && spent[index]! + micros <= limit ? Promise.resolve(true) : confirm(micros, ...rest);
    },
  };
}

/**
 * The second product bought part by part as the first product's tasks finish (see PartByPart),
 * when the ledger is on (the chain's run of the product is planned against what they bought)
 * and something is bought; undefined otherwise. Each group of parts is a run of its own: the
 * second product's identity in the chain with the group's number (`#1`, `#2`…), its numbers
 * never padded (too few wait for the chain's run of the product).
 */
function partByPart(
  request: SubmitRequest,
  steps: readonly ChainStep[],
  deps: ChainDeps & { firstDeps: SubmitRunDeps; laterDeps: readonly SubmitRunDeps[] },
  chain: {
    startedAt: number;
    firstRunning: () => boolean;
    room: () => Promise<void>;
    lastPartSize: () => number;
    prepared: () => PrepareResult;
    bound: () => number | undefined;
    spent: number[];
  },
):
  | {
      partDone(result: UploadResult, run: RunRecord): void;
      buying(): boolean;
      stop(): void;
      end(): void;
      settle(): Promise<EarlyRun[]>;
    }
  | undefined {
  const [step] = steps;
  if (!step || !request.ledger || request.dryRun) return undefined;
  const stepDeps = deps.laterDeps[0]!;
  let firstRun: RunRecord | undefined;
  const requestOf = (parts: EarlyParts): SubmitRequest => {
    const run = firstRun!;
    const spent = (planOf(run)?.reservationMicros ?? 0) + chain.spent[0]!;
    const list = { ...chain.prepared(), chunks: parts.lists };
    const base = stepRequest(request, steps, 0, list, run.source, spent, stepDeps.limits.minTaskSize);
    return {
      ...base,
      pad: "never",
      startedAt: chain.startedAt,
      command: { ...base.command, chain: `${base.command.chain}#${parts.index + 1}` },
    };
  };
  const early = new PartByPart({
    step,
    minTaskSize: stepDeps.limits.minTaskSize,
    staged: (results) => deps.staged(0, results, chain.prepared().settings),
    dir: deps.firstDeps.workDir,
    signal: deps.firstDeps.signal,
    room: chain.room,
    lastPartSize: chain.lastPartSize,
    run: async (parts) => {
      const outcome = await submitRun(requestOf(parts), {
        ...stepDeps,
        ...withinBound(stepDeps, chain.bound, chain.spent, 0),
        workDir: await stepDir(deps.firstDeps, 0, `part-${parts.index + 1}`),
        // The first product's tasks hold the service's room: its runs part by part wait for it.
        roomWillCome: chain.firstRunning,
        // Told in lines of its own: the first product's progress is on the terminal meanwhile.
        onEvent: (event) => {
          if (event.type === "plan") deps.onEvent({ type: "parts", step, parts, plan: event.plan, continued: event.continued });
          else if (event.type !== "schedule") stepDeps.onEvent(event);
        },
      });
      if (outcome) chain.spent[0]! += outcome.plan.reservationMicros;
      return outcome;
    },
    isOpen: async (parts) =>
      (await stepDeps.store.runs.open(stepDeps.scope, runIdentity(stepDeps.scope, requestOf(parts).command))) !== undefined,
    onStop: async (stop, parts) => {
      if (stop.reason === "quota") {
        // Nothing of it was uploaded: it must not be carried on later, after the chain's run of the product bought its numbers.
        const open = await stepDeps.store.runs.open(stepDeps.scope, runIdentity(stepDeps.scope, requestOf(parts).command));
        if (open)
          await stepDeps.store.runs.update(open.id, {
            state: "abandoned",
            finishedAt: new Date(stepDeps.now()).toISOString(),
            note: stop.error.message,
          });
      }
      deps.onEvent({ type: "parts stopped", step, parts, stop });
    },
  });
  return {
    partDone(result, run) {
      firstRun = run;
      early.partDone(result);
    },
    buying: () => early.buying,
    stop: () => early.stop(),
    end: () => early.end(),
    settle: () => early.settle(),
  };
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
    mayBeEmpty: true,
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

/** The numbers the runs uploaded, as one set. */
async function uploadedBy(runs: readonly RunOutcome[]): Promise<IdentifierSet> {
  const numbers = new IdentifierSet();
  for (const { results } of runs) for (const { upload } of results) await addIdentifiers(upload.path, numbers);
  return numbers;
}

/** A product's results with those of its runs part by part before them (all staged in the product's one staging area). */
function withEarly(staged: StagedResults, early: StagedResults): StagedResults {
  if (early.tasks.length === 0) return staged;
  const ids = new Set(early.tasks.map((task) => task.id));
  return {
    ...staged,
    tasks: [...early.tasks, ...staged.tasks],
    read: (task) => (ids.has(task.id) ? early.read(task) : staged.read(task)),
    checkedAt: (task) => (ids.has(task.id) ? early.checkedAt(task) : staged.checkedAt(task)),
  };
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

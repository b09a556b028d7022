import type { JoinStatus, LaterColumns } from "../outputs/join-rows.js";
import { resultMap } from "../results/read-results.js";
import { identifierKey, type IdentifierKey } from "../spec/identifier-key.js";
import { resultColumns, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { SummaryTable } from "../results/format-xlsx.js";
import { billing } from "../tasks/billing.js";
import { runTable } from "../tasks/summary-sheet.js";
import type { RunOutcome } from "../run/submit-request.js";
import type { StagedResults, UnsentNumbers } from "../tasks/download.js";
import { PRODUCT_COLUMN_PREFIX, type ChainStep } from "./chain.js";
import { isSelected, stagedRows, type Selection } from "./selection.js";

/**
 * What a later product of a chain says of a number, in its `<product>_status` column: a kept
 * number's `checked`, `reused`, `no_result` or `waiting` as for the first product, or
 * `not_selected` (the earlier product's result does not have the condition's value) or
 * `no_earlier_result` (the product the condition reads has no result for it), or
 * `earlier_failed` (the first product's task that held it failed, so no later product checked it). Any other
 * row says what it said for the first product (`invalid`, `duplicate`…). A product whose task
 * failed says `failed` for every number it was to check: none has a result.
 */
export type LaterStatus = JoinStatus | "not_selected" | "no_earlier_result" | "earlier_failed";

/** A later product of a finished chain: its step, the numbers it was checked on, and its results. */
export interface LaterProduct {
  step: ChainStep;
  selection: Selection;
  staged: StagedResults;
  /** Its runs part by part: a result its run took from one of their tasks (in flight when it planned) was bought now, `checked`. */
  early?: readonly Pick<RunOutcome, "results">[];
}

/** The later products' columns of an output, and every number one of them has a result for. */
export interface ChainColumns extends LaterColumns {
  identifiers(): Iterable<string>;
  summary(prices: Record<ServiceType, number> | undefined): readonly SummaryTable[];
}

/**
 * The columns a chain's later products add to its output, in chain order, each product's
 * named with its short name (PRODUCT_COLUMN_PREFIX) so that none clashes with the first
 * product's or another's: `activity_activated`, `activity_status`, `activity_checked_at`.
 * Each product's results are held in memory (identifier → values), as the join holds the first's.
 */
export async function chainColumns(
  later: readonly LaterProduct[],
  failed: Omit<LaterProduct, "staged"> | undefined,
  signal?: AbortSignal,
): Promise<ChainColumns> {
  const products: ChainColumns[] = [];
  for (const product of later) products.push(await productColumns(product, signal));
  if (failed) products.push(failedColumns(failed));
  return {
    products: products.flatMap((product) => product.products),
    names: products.flatMap((product) => product.names),
    values: (identifier, status) => products.flatMap((product) => product.values(identifier, status)),
    summary: (prices) => products.flatMap((product) => product.summary(prices)),
    *identifiers() {
      for (const product of products) yield* product.identifiers();
    },
  };
}

/** A later product's rows by its status, counted as they are written, and its tables of a Summary sheet. */
class StatusTally {
  readonly #byStatus = new Map<LaterStatus, number>();

  constructor(
    private readonly step: ChainStep,
    private readonly tasks: readonly Task[],
  ) {}

  count(status: LaterStatus): LaterStatus {
    this.#byStatus.set(status, (this.#byStatus.get(status) ?? 0) + 1);
    return status;
  }

  /** Its run (as the first product's table says it) when it has tasks or results, then its rows by status. */
  tables(prices: Record<ServiceType, number> | undefined): SummaryTable[] {
    const rows = (status: LaterStatus) => this.#byStatus.get(status) ?? 0;
    const counts = { checked: rows("checked"), reused: rows("reused"), noResult: rows("no_result"), waiting: rows("waiting") };
    const { product } = this.step;
    const tasks = this.tasks;
    return [
      runTable({ product, tasks, ...(prices ? { bill: billing(tasks, prices) } : {}), counts }),
      { heading: [`${PRODUCT_COLUMN_PREFIX[product]}_status`, "Rows"], rows: [...this.#byStatus] },
    ];
  }
}

async function productColumns({ step, selection, staged, early = [] }: LaterProduct, signal?: AbortSignal): Promise<ChainColumns> {
  const results = await resultMap(stagedRows(staged, { checkedAt: true, ...(signal ? { signal } : {}) }));
  const prefix = PRODUCT_COLUMN_PREFIX[step.product];
  // The results end with checked_at; the status goes before it, as the first product's does.
  const valueColumns = results.columns.slice(0, -1);
  const blank = valueColumns.map(() => "");
  const tally = new StatusTally(step, staged.tasks);
  const boughtEarly = new Set(early.flatMap((run) => run.results.map((result) => result.upload.ref)));
  return {
    products: [step.product],
    names: [...valueColumns.map((column) => `${prefix}_${column}`), `${prefix}_status`, `${prefix}_checked_at`],
    values(identifier, status) {
      if (identifier === undefined) return [...blank, tally.count(status), ""];
      const found = results.byIdentifier.get(identifier);
      const own = tally.count(
        status === "duplicate" ? status : laterStatus(identifier, found !== undefined, selection, staged.unsent, boughtEarly),
      );
      return found ? [...found.slice(0, -1), own, found.at(-1) ?? ""] : [...blank, own, ""];
    },
    summary: (prices) => tally.tables(prices),
    identifiers: () => results.byIdentifier.keys(),
  };
}

/** A product whose task failed: its columns empty, and `failed` for every number it was to check. */
function failedColumns({ step, selection }: Omit<LaterProduct, "staged">): ChainColumns {
  const prefix = PRODUCT_COLUMN_PREFIX[step.product];
  // Its task failed: what the service says of it is in the tasks of the run's record, not here.
  const tally = new StatusTally(step, []);
  const blank = resultColumns(step.product)
    .slice(1)
    .map(() => "");
  return {
    products: [step.product],
    names: [
      ...resultColumns(step.product)
        .slice(1)
        .map((column) => `${prefix}_${column}`),
      `${prefix}_status`,
      `${prefix}_checked_at`,
    ],
    values(identifier, status) {
      if (identifier === undefined || status === "duplicate") return [...blank, tally.count(status), ""];
      return [...blank, tally.count(unselectedStatus(selection, identifierKey(identifier)) ?? "failed"), ""];
    },
    summary: (prices) => tally.tables(prices),
    identifiers: () => [],
  };
}

function laterStatus(
  identifier: string,
  found: boolean,
  selection: Selection,
  unsent: UnsentNumbers | undefined,
  boughtEarly: ReadonlySet<number>,
): LaterStatus {
  const key = identifierKey(identifier);
  const unselected = unselectedStatus(selection, key);
  if (unselected) return unselected;
  const reusedFrom = unsent?.reused.get(key);
  if (found) return reusedFrom !== undefined && !boughtEarly.has(reusedFrom) ? "reused" : "checked";
  return unsent?.waiting.has(key) ? "waiting" : "no_result";
}

/** Why a product was not checked on a number its run keeps; undefined when it was to be. */
function unselectedStatus(selection: Selection, key: IdentifierKey): LaterStatus | undefined {
  if (selection.leftOut?.has(key)) return "earlier_failed";
  if (isSelected(selection, key)) return undefined;
  return selection.answered.has(key) ? "not_selected" : "no_earlier_result";
}

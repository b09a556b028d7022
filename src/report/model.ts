import type { SourceSummary } from "../results/read-results.js";
import type { CarrierCounts, SignalCounts, Tally } from "../results/tally.js";
import type { ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { billing } from "../tasks/billing.js";
import { reservationMicros } from "../tasks/cost.js";
import { resultCounts } from "../tasks/download.js";
import type { ChangesSummary } from "../ledger/changes.js";
import type { RunPlan } from "../run/plan.js";
import { numbersLines, type NumbersLine } from "./output-numbers.js";
import type { RunFacts } from "./run-facts.js";

/** What a report is made from: the finished tasks, their rows' counts, the price and what the store knows of their runs. */
export interface ReportInput {
  product: ServiceType;
  /** The tasks, in the order their results were read. */
  tasks: readonly Task[];
  /** The counts of the rows read; `sources[i]` is the result of `tasks[i]`. */
  results: Tally & { sources: readonly Pick<SourceSummary, "signal" | "label" | "rows">[] };
  /** Per-number prices (micro-USD) from the config. */
  prices: Record<ServiceType, number>;
  runs: RunFacts;
  /** When the report was made (ISO 8601). */
  generatedAt: string;
  /** The results file written beside the report, if any. */
  resultsPath?: string;
  /** What changed since each number's previous check (a run with the ledger on). */
  changes?: ChangesSummary;
  /**
   * The lists of runs whose reused rows could not be read again for this report (the file
   * is gone or changed since; "standard input" cannot be read twice).
   */
  unreadLists?: readonly string[];
}

export interface CountrySignal {
  country: string;
  counts: SignalCounts;
}

export interface Money {
  priceMicros: number;
  /** The numbers uploaded times the price, as shown before submitting; absent when the store knows no task. */
  estimateMicros?: number;
  reservedMicros: number;
  chargedMicros: number;
  refundedMicros: number;
  checked: number;
  noResult: number;
  /** What the runs' reuse saved: the numbers they did not pay for again, at the price. */
  saved: { numbers: number; micros: number };
  /** What the runs reserved to fill a task to the minimum size with fresh numbers checked again. */
  padding: { numbers: number; micros: number };
}

/** Everything a report shows, worked out; rendering only formats it. */
export interface ReportModel {
  product: ServiceType;
  generatedAt: string;
  countries: string[];
  tasks: readonly Task[];
  sources: readonly string[];
  resultsPath?: string;
  preparation: RunFacts["preparation"];
  /** Lines the service excluded while preparing, by class (fuller task variant only). */
  excludedByService: Array<[string, number]>;
  /** Where the output's rows came from, line by line (see numbersLines). */
  numbers: NumbersLine[];
  money: Money;
  rows: number;
  /** Of the rows, those the runs took from the ledger (checked before, not charged now). */
  reusedRows: number;
  unreadLists: readonly string[];
  /** Signal products: the overall split, and one per country when the tasks span several. */
  signal?: { all: SignalCounts; byCountry: CountrySignal[] };
  carrier?: CarrierCounts;
  changes?: ChangesSummary;
}

/** The report's figures from what a download (or `bulkcheck report`) learned. */
export function reportModel(input: ReportInput): ReportModel {
  const { tasks, results, product } = input;
  const priceMicros = input.prices[product];
  const bill = billing(tasks, input.prices);
  const reserved = tasks.reduce((sum, task) => sum + (task.submitted_lines ?? task.total) * priceMicros, 0);
  const countries = [...new Set(tasks.map((task) => task.country).filter((country) => country !== ""))];
  const counts = resultCounts(tasks, results.sources);
  const { plans } = input.runs;
  const planned = (count: (plan: RunPlan) => number, micros: (plan: RunPlan) => number) => ({
    numbers: plans.reduce((sum, plan) => sum + count(plan), 0),
    micros: plans.reduce((sum, plan) => sum + micros(plan), 0),
  });
  return {
    product,
    generatedAt: input.generatedAt,
    countries,
    tasks,
    sources: input.runs.sources,
    ...(input.resultsPath === undefined ? {} : { resultsPath: input.resultsPath }),
    preparation: input.runs.preparation,
    excludedByService: Object.entries(bill.excluded).map(([field, n]) => [field.replace(/_cnt$/, ""), n]),
    numbers: numbersLines({
      plans,
      output: counts,
      uploaded: tasks.reduce((sum, task) => sum + (task.submitted_lines ?? task.total), 0),
      rows: results.rows,
    }),
    money: {
      priceMicros,
      ...(input.runs.known > 0 ? { estimateMicros: input.runs.uploaded * priceMicros } : {}),
      reservedMicros: reserved,
      chargedMicros: bill.chargedMicros,
      refundedMicros: bill.refundedMicros,
      checked: counts.checked,
      noResult: counts.noResult,
      // What was not paid for again: results reused, numbers answered without a result, numbers in tasks in flight.
      saved: planned(
        (plan) => plan.reused + (plan.noResult ?? 0) + (plan.inFlight?.numbers ?? 0),
        (plan) => plan.savedMicros,
      ),
      padding: planned(
        (plan) => plan.padded,
        (plan) => reservationMicros(plan.padded, plan.priceMicros),
      ),
    },
    rows: results.rows,
    reusedRows: counts.reused,
    unreadLists: input.unreadLists ?? [],
    ...(results.signal ? { signal: { all: results.signal, byCountry: reportSignalByCountry(tasks, results.sources) } } : {}),
    ...(results.carrier ? { carrier: results.carrier } : {}),
    ...(input.changes ? { changes: input.changes } : {}),
  };
}

/** The label of the ledger's rows in a split by country: they are of the run's countries, but no task says which. */
const FROM_THE_LEDGER = "Reused from the ledger";

/**
 * signalByCountry, and the rows the ledger served (the sources after the tasks' own)
 * as a line of their own, so the lines add up to the whole output.
 */
function reportSignalByCountry(tasks: readonly Task[], sources: readonly Pick<SourceSummary, "signal">[]): CountrySignal[] {
  const byCountry = signalByCountry(tasks, sources);
  const ledger = sources.slice(tasks.length).reduce<SignalCounts>(
    (sum, { signal }) => ({
      true: sum.true + (signal?.true ?? 0),
      false: sum.false + (signal?.false ?? 0),
      other: sum.other + (signal?.other ?? 0),
    }),
    { true: 0, false: 0, other: 0 },
  );
  const ledgerRows = ledger.true + ledger.false + ledger.other;
  return byCountry.length > 0 && ledgerRows > 0 ? [...byCountry, { country: FROM_THE_LEDGER, counts: ledger }] : byCountry;
}

/** Each country's true/false split, from each task's own counts; empty unless the tasks span several countries. */
export function signalByCountry(tasks: readonly Task[], sources: readonly Pick<SourceSummary, "signal">[]): CountrySignal[] {
  const byCountry = new Map<string, SignalCounts>();
  tasks.forEach((task, i) => {
    const counts = sources[i]?.signal;
    if (!counts) return;
    const total = byCountry.get(task.country) ?? { true: 0, false: 0, other: 0 };
    total.true += counts.true;
    total.false += counts.false;
    total.other += counts.other;
    byCountry.set(task.country, total);
  });
  if (byCountry.size < 2) return [];
  return [...byCountry].map(([country, counts]) => ({ country, counts })).sort((a, b) => (a.country < b.country ? -1 : 1));
}

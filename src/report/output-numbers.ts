import type { RunPlan } from "../run/plan.js";
import type { ResultCounts } from "../tasks/summary-sheet.js";

/** What "The numbers" of a report are read from: the runs' plans, and what the output holds. */
export interface NumbersFacts {
  /** The plans of the tasks' runs; none when the store knows no run of them. */
  plans: readonly RunPlan[];
  /** The output's rows: the tasks' own, the ledger's, and the tasks' numbers without a row. */
  output: Required<Omit<ResultCounts, "waiting">>;
  /** Numbers the tasks were given (lines uploaded). */
  uploaded: number;
  /** Rows in the output. */
  rows: number;
}

/** One line of "The numbers": how many numbers of the output came to be so, and when they were checked if before this run. */
export interface NumbersLine {
  id: string;
  label: string;
  numbers: number;
  checked?: { oldest: string; newest: string };
}

interface LineRule {
  id: string;
  label: string;
  /** The line's numbers; undefined when nothing is known of them. */
  numbers: (facts: NumbersFacts) => number | undefined;
  /** Shown even when 0 (the output's own lines); the others only when they have numbers. */
  always?: boolean;
  checked?: (facts: NumbersFacts) => NumbersLine["checked"];
}

/** A figure of the plans, added up over the runs; undefined when no run's plan is known. */
function planned(count: (plan: RunPlan) => number): (facts: NumbersFacts) => number | undefined {
  return ({ plans }) => (plans.length === 0 ? undefined : plans.reduce((sum, plan) => sum + count(plan), 0));
}

/** The numbers the runs reused that are not in the output (read from the tasks alone, or the run's list is gone). */
function reusedElsewhere(facts: NumbersFacts): number | undefined {
  const reused = planned((plan) => plan.reused)(facts);
  return reused === undefined ? undefined : Math.max(0, reused - facts.output.reused);
}

/** The numbers the runs took from tasks of other runs in flight, with a result or without. */
const inFlightTaken = planned((plan) => plan.inFlight?.numbers ?? 0);

/** Those of them answered there without a result. */
function inFlightWithoutResult(facts: NumbersFacts): number | undefined {
  const withRow = inFlightWithRow(facts);
  return withRow === undefined ? undefined : inFlightTaken(facts)! - withRow;
}

/**
 * The numbers the runs took from tasks in flight that got a row: the output's ledger rows
 * beyond the ledger results the plans reused. The rest were answered there without a result.
 */
function inFlightWithRow(facts: NumbersFacts): number | undefined {
  const inFlight = inFlightTaken(facts);
  const reused = planned((plan) => plan.reused)(facts);
  return inFlight === undefined || reused === undefined ? undefined : Math.min(inFlight, Math.max(0, facts.output.reused - reused));
}

/** When the results the runs reused were checked: from the oldest to the newest. */
function reusedFrom({ plans }: NumbersFacts): NumbersLine["checked"] {
  const ranges = plans.map((plan) => plan.reusedFrom).filter((range) => range !== undefined);
  if (ranges.length === 0) return undefined;
  const oldest = ranges.map((range) => range.oldest).reduce((a, b) => (a < b ? a : b));
  const newest = ranges.map((range) => range.newest).reduce((a, b) => (a > b ? a : b));
  return { oldest, newest };
}

/**
 * The lines of "The numbers", in order: where each of the list's kept numbers got its
 * row (or none) in the output. A plan's new count is one more rule here.
 */
const LINES: readonly LineRule[] = [
  { id: "kept", label: "Kept from the list", numbers: planned((plan) => plan.kept), always: true },
  { id: "reused", label: "Reused from the ledger", numbers: ({ output }) => output.reused, checked: reusedFrom },
  {
    id: "reused-elsewhere",
    label: "Reused from the ledger, not in this output",
    numbers: reusedElsewhere,
  },
  {
    id: "in-flight",
    label: "of which taken from tasks of other runs, in flight when this run was planned",
    numbers: inFlightWithRow,
  },
  {
    id: "in-flight-no-result",
    label: "Taken from tasks of other runs in flight, answered there without a result",
    numbers: inFlightWithoutResult,
  },
  {
    id: "no-result-before",
    label: "Checked before without a result (within --max-age), not checked again",
    numbers: planned((plan) => plan.noResult ?? 0),
  },
  {
    id: "waiting",
    label: "Waiting for a later run (too few for a task, and --pad never)",
    numbers: planned((plan) => plan.waiting ?? 0),
  },
  { id: "uploaded", label: "Uploaded to the service", numbers: ({ uploaded }) => uploaded, always: true },
  {
    id: "padded",
    label: "of which fresh results checked again, to fill a task to the service's minimum size",
    numbers: planned((plan) => plan.padded),
  },
  { id: "checked", label: "Checked now, with a result", numbers: ({ output }) => output.checked, always: true },
  { id: "no-result", label: "Checked now, without a result", numbers: ({ output }) => output.noResult, always: true },
  { id: "rows", label: "Rows in the output", numbers: ({ rows }) => rows, always: true },
];

/** The lines of "The numbers" these facts give: each line whose numbers are known, and not 0 unless it is the output's own. */
export function numbersLines(facts: NumbersFacts): NumbersLine[] {
  return LINES.flatMap((rule) => {
    const numbers = rule.numbers(facts);
    if (numbers === undefined || (numbers === 0 && !rule.always)) return [];
    const checked = rule.checked?.(facts);
    return [{ id: rule.id, label: rule.label, numbers, ...(checked ? { checked } : {}) }];
  });
}

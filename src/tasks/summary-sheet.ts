import type { SummaryTable } from "../results/format-xlsx.js";
import { tallyTables } from "../results/summary.js";
import type { Tally } from "../results/tally.js";
import type { CellValue } from "../results/xlsx-xml.js";
import type { Task } from "../spec/task.js";
import type { Billing, ExcludedBeforeUpload } from "./billing.js";

/** What the rows written say was checked, for a summary: the tasks' rows, the ledger's rows, and each task's numbers that got none. */
export interface ResultCounts {
  checked: number;
  /** Rows a run took from the ledger (checked before, not charged now). */
  reused?: number;
  noResult: number;
  /** Numbers a run left waiting for a later run (never sent: too few for a task, and --pad never). */
  waiting?: number;
}

/** What a download knows of its run beyond the rows: the tasks, what they cost, what preparation left out. */
export interface RunFacts {
  product: string;
  tasks: readonly Task[];
  /** Absent when no price is known. */
  bill?: Billing;
  counts: ResultCounts;
  excluded?: ExcludedBeforeUpload;
}

/** "invalid_cnt" → "invalid": the class names without their `_cnt`. */
function className(field: string): string {
  return field.replace(/_cnt$/, "");
}

/**
 * The xlsx Summary sheet of a download: the run (product, tasks, what was checked,
 * charged and refunded, what was excluded and by whom), then the rows' counts.
 */
export function summarySheet(run: RunFacts, tally: Tally): SummaryTable[] {
  return [runTable(run), ...tallyTables(tally)];
}

/** The run as the first table of a Summary sheet (a download's, or a join's). */
export function runTable(run: RunFacts): SummaryTable {
  const rows: Array<readonly [string, CellValue]> = [
    ["Product", run.product],
    ["Tasks", run.tasks.map((task) => task.id).join(" ")],
    ["Countries", [...new Set(run.tasks.map((task) => task.country).filter(Boolean))].join(" ")],
  ];
  rows.push(["Checked", run.counts.checked]);
  if (run.counts.reused) rows.push(["Reused from the ledger", run.counts.reused]);
  rows.push(["No result", run.counts.noResult]);
  if (run.counts.waiting) rows.push(["Waiting for a later run", run.counts.waiting]);
  if (run.bill) {
    rows.push(["Charged", { micros: run.bill.chargedMicros }], ["Refunded", { micros: run.bill.refundedMicros }]);
    for (const [field, n] of Object.entries(run.bill.excluded)) rows.push([`Excluded by the service: ${className(field)}`, n]);
  }
  for (const [field, n] of Object.entries(run.excluded ?? {})) rows.push([`Excluded before upload: ${className(field)}`, n]);
  return { heading: ["Run", ""], rows };
}

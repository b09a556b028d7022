import { count } from "../../format-count.js";
import type { Billing, ExcludedBeforeUpload } from "../../tasks/billing.js";
import { formatUsd } from "../../tasks/cost.js";
import type { ResultCounts } from "../../tasks/summary-sheet.js";

/**
 * What finished tasks cost, for humans (stderr), beside what the written output holds:
 * numbers with a result (checked now, or reused), those without, and those waiting for a
 * later run. The counts come from the output itself, so the summary always agrees with
 * the file (a merged download once said "no result 7088" of a 3,544-row list); the money
 * is the service's.
 */
export function describeBilling(bill: Billing, counts: ResultCounts): string[] {
  // Beside reused rows a bare "Checked" reads as "checked now" for all of them: say which is which.
  const withResult = counts.reused
    ? `Checked now ${count(counts.checked)}, reused from the ledger ${count(counts.reused)}`
    : `Checked ${count(counts.checked)}`;
  const waiting = counts.waiting ? `, waiting for a later run ${count(counts.waiting)}` : "";
  const lines = [
    `${withResult}, no result ${count(counts.noResult)}${waiting}. Charged ${formatUsd(bill.chargedMicros)}; refunded ${formatUsd(bill.refundedMicros)}.`,
  ];
  const excluded = Object.entries(bill.excluded).filter(([, n]) => n > 0);
  if (excluded.length > 0) lines.push(`Excluded by the service: ${countsText(excluded)}.`);
  return lines;
}

/** The billing fields of a --json summary. */
export function billingJson(bill: Billing, counts: ResultCounts) {
  return {
    checked: counts.checked,
    ...(counts.reused ? { reused: counts.reused } : {}),
    no_result: counts.noResult,
    ...(counts.waiting ? { waiting: counts.waiting } : {}),
    charged_micros: bill.chargedMicros,
    refunded_micros: bill.refundedMicros,
    ...(Object.keys(bill.excluded).length > 0 ? { excluded_by_service: bill.excluded } : {}),
  };
}

export function describeExcluded(excluded: ExcludedBeforeUpload): string {
  const parts = Object.entries(excluded).filter(([, n]) => n > 0);
  return parts.length === 0 ? "Excluded before upload: none." : `Excluded before upload (not charged): ${countsText(parts)}.`;
}

/** "invalid 3, duplicate 2": the `_cnt` names without their suffix. */
function countsText(counts: ReadonlyArray<readonly [string, number]>): string {
  return counts.map(([field, n]) => `${field.replace(/_cnt$/, "")} ${count(n)}`).join(", ");
}

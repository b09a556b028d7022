import type { Billing, ExcludedBeforeUpload } from "../../../tasks/billing.js";
import { formatUsd } from "../../../tasks/cost.js";

/** What finished tasks cost, for humans (stderr). */
export function describeBilling(bill: Billing): string[] {
  const lines = [
    `Checked ${bill.checked}, no result ${bill.noResult}. Charged ${formatUsd(bill.chargedMicros)}; refunded ${formatUsd(bill.refundedMicros)}.`,
  ];
  const excluded = Object.entries(bill.excluded).filter(([, n]) => n > 0);
  if (excluded.length > 0) lines.push(`Excluded by the service: ${countsText(excluded)}.`);
  return lines;
}

/** The billing fields of a --json summary. */
export function billingJson(bill: Billing) {
  return {
    checked: bill.checked,
    no_result: bill.noResult,
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
  return counts.map(([field, n]) => `${field.replace(/_cnt$/, "")} ${n}`).join(", ");
}

import { taskCharge } from "../results/charges.js";
import { canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import { formatUsd } from "../tasks/cost.js";
import type { Journal } from "../journal/journal.js";

const EXCLUSIONS = ["invalid_cnt", "no_code_cnt", "other_country_cnt", "duplicate_cnt"] as const;

export interface Billing {
  chargedMicros: number;
  refundedMicros: number;
  checked: number;
  noResult: number;
  /** Lines the service excluded while preparing, summed over the tasks (fuller task variant only). */
  excluded: Partial<Record<(typeof EXCLUSIONS)[number], number>>;
}

/** What finished tasks cost: only checked numbers are charged, the rest of each reservation is refunded. */
export function billing(tasks: readonly Task[], prices: Record<ServiceType, number>): Billing {
  const charges = tasks.flatMap((task) => {
    const product = canonicalServiceType(task.product);
    const charge = product ? taskCharge(task, prices[product]) : undefined;
    return charge ? [charge] : [];
  });
  const excluded: Billing["excluded"] = {};
  for (const field of EXCLUSIONS) {
    const counts = tasks.map((task) => task[field]).filter((n): n is number => n !== undefined);
    if (counts.length > 0) excluded[field] = counts.reduce((sum, n) => sum + n, 0);
  }
  return {
    chargedMicros: charges.reduce((sum, c) => sum + c.chargedMicros, 0),
    refundedMicros: charges.reduce((sum, c) => sum + c.refundedMicros, 0),
    checked: charges.reduce((sum, c) => sum + c.charged, 0),
    noResult: tasks.reduce((sum, task) => sum + (task.failure_cnt ?? 0), 0),
    excluded,
  };
}

export function describeBilling(bill: Billing): string[] {
  const lines = [`Checked ${bill.checked}, no result ${bill.noResult}. Charged ${formatUsd(bill.chargedMicros)}; refunded ${formatUsd(bill.refundedMicros)}.`];
  const excluded = Object.entries(bill.excluded).filter(([, n]) => n > 0);
  if (excluded.length > 0) lines.push(`Excluded by the service: ${excluded.map(([field, n]) => `${field.replace(/_cnt$/, "")} ${n}`).join(", ")}.`);
  return lines;
}

export function billingJson(bill: Billing) {
  return {
    checked: bill.checked,
    no_result: bill.noResult,
    charged_micros: bill.chargedMicros,
    refunded_micros: bill.refundedMicros,
    ...(Object.keys(bill.excluded).length > 0 ? { excluded_by_service: bill.excluded } : {}),
  };
}

const LOCAL_CLASSES = ["invalid_cnt", "no_code_cnt", "other_country_cnt", "duplicate_cnt", "blank"] as const;

/**
 * Rows preparation kept out of the upload, from the summaries journalled with the
 * tasks; a split list's parts share one summary, which is counted once.
 */
export async function excludedBeforeUpload(journal: Journal, taskIds: readonly string[]): Promise<Record<string, number> | undefined> {
  const summaries = new Map<string, Record<string, unknown>>();
  for (const id of taskIds) {
    const prepared = (await journal.findByTaskId(id))?.submit.prepared;
    if (prepared) summaries.set(JSON.stringify(prepared), prepared);
  }
  if (summaries.size === 0) return undefined;
  const totals: Record<string, number> = {};
  for (const summary of summaries.values()) {
    for (const field of LOCAL_CLASSES) {
      const value = summary[field];
      if (typeof value === "number") totals[field] = (totals[field] ?? 0) + value;
    }
  }
  return totals;
}

export function describeExcluded(excluded: Record<string, number>): string {
  const parts = Object.entries(excluded).filter(([, n]) => n > 0).map(([field, n]) => `${field.replace(/_cnt$/, "")} ${n}`);
  return parts.length === 0 ? "Excluded before upload: none." : `Excluded before upload (not charged): ${parts.join(", ")}.`;
}

import { runSummaries, type TaskOrigin } from "./origins.js";
import type { PrepareSummary } from "../prepare/summary.js";
import { UsageError } from "../errors.js";
import { DEFAULT_PRICE_MICROS, canonicalServiceType, type ServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";
import type { UnfinishedTasks } from "../store/store.js";
import { reservationMicros } from "./cost.js";

/** Lines the service itself excluded while preparing a task (fuller task variant only). */
const SERVICE_EXCLUSIONS = ["invalid_cnt", "no_code_cnt", "other_country_cnt", "duplicate_cnt"] as const;

export interface Billing {
  chargedMicros: number;
  refundedMicros: number;
  /** Lines the service excluded while preparing, summed over the tasks. */
  excluded: Partial<Record<(typeof SERVICE_EXCLUSIONS)[number], number>>;
}

/** What finished tasks cost: only checked numbers are charged, the rest of each reservation is refunded. */
export function billing(tasks: readonly Task[], prices: Record<ServiceType, number>): Billing {
  const charges = tasks.flatMap((task) => {
    const product = canonicalServiceType(task.product);
    const charge = product ? taskCharge(task, prices[product]) : undefined;
    return charge ? [charge] : [];
  });
  const excluded: Billing["excluded"] = {};
  for (const field of SERVICE_EXCLUSIONS) {
    const counts = tasks.map((task) => task[field]).filter((n): n is number => n !== undefined);
    if (counts.length > 0) excluded[field] = counts.reduce((sum, n) => sum + n, 0);
  }
  return {
    chargedMicros: charges.reduce((sum, c) => sum + c.chargedMicros, 0),
    refundedMicros: charges.reduce((sum, c) => sum + c.refundedMicros, 0),
    excluded,
  };
}

/** What the service holds reserved for tasks not yet finished: their numbers at their product's price. */
export interface Reserved {
  tasks: number;
  numbers: number;
  micros: number;
}

/**
 * The reservation of unfinished tasks (see TaskStore.unfinished): the service reserves
 * every uploaded number at the product's price until the task finishes. A product this
 * version does not know has no price here, and counts no money.
 */
export function reservedFor(unfinished: readonly UnfinishedTasks[], prices: Record<ServiceType, number>): Reserved {
  return unfinished.reduce(
    (sum, { product, tasks, numbers }) => {
      const known = canonicalServiceType(product);
      return {
        tasks: sum.tasks + tasks,
        numbers: sum.numbers + numbers,
        micros: sum.micros + (known ? reservationMicros(numbers, prices[known]) : 0),
      };
    },
    { tasks: 0, numbers: 0, micros: 0 },
  );
}

/** The rows local preparation kept out of an upload, by class (below_min_task only under --country auto). */
const LOCAL_EXCLUSIONS = [
  "invalid_cnt",
  "no_code_cnt",
  "other_country_cnt",
  "duplicate_cnt",
  "blank",
  "below_min_task",
] as const satisfies ReadonlyArray<keyof PrepareSummary>;

export type ExcludedBeforeUpload = Partial<Record<(typeof LOCAL_EXCLUSIONS)[number], number>>;

/**
 * Rows preparation kept out of the upload, from the summaries recorded with the tasks'
 * runs; a split list's parts share one summary, which is counted once. Undefined when
 * the store holds no summary for any of the tasks (submitted elsewhere).
 */
export function excludedBeforeUpload(origins: Iterable<TaskOrigin>): ExcludedBeforeUpload | undefined {
  const summaries = runSummaries(origins);
  if (summaries.length === 0) return undefined;
  const totals: ExcludedBeforeUpload = {};
  for (const summary of summaries) {
    for (const field of LOCAL_EXCLUSIONS) {
      const rows = summary[field];
      if (rows !== undefined) totals[field] = (totals[field] ?? 0) + rows;
    }
  }
  return totals;
}

/** What a finished task cost, in micro-USD. */
export interface TaskCharge {
  priceMicros: number;
  /** Numbers reserved at submit: `submitted_lines` when the task has it, else `total`. */
  submitted: number;
  /** Numbers charged: `success_cnt`, or 0 for a failed task. */
  charged: number;
  chargedMicros: number;
  /** Reserved minus charged: everything for a failed task. */
  refundedMicros: number;
}

/**
 * The spec's billing rules applied to a task: the full file is reserved at submit, only
 * successfully checked numbers are charged, the rest is refunded, and a failed task is
 * refunded in full. Returns undefined while the outcome is unknown (still processing,
 * or a success without `success_cnt`).
 * @param priceMicros per-number price; defaults to the spec's price list.
 * @throws UsageError when the product has no listed price and none is given.
 */
export function taskCharge(task: Task, priceMicros?: number): TaskCharge | undefined {
  const product = canonicalServiceType(task.product);
  const price = priceMicros ?? (product === undefined ? undefined : DEFAULT_PRICE_MICROS[product]);
  if (price === undefined) {
    throw new UsageError(`No price is known for product ${task.product}.`, { hint: "Give the per-number price." });
  }
  const submitted = task.submitted_lines ?? task.total;
  let charged: number;
  if (task.status === "failed") charged = 0;
  else if (task.status === "success" && task.success_cnt !== undefined) charged = task.success_cnt;
  else return undefined;
  return {
    priceMicros: price,
    submitted,
    charged,
    chargedMicros: charged * price,
    refundedMicros: Math.max(0, submitted - charged) * price,
  };
}

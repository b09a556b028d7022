import { UsageError } from "../errors.js";
import { DEFAULT_PRICE_MICROS, canonicalServiceType } from "../spec/products.js";
import type { Task } from "../spec/task.js";

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

import { InputRejectedError, InsufficientBalanceError } from "../errors.js";
import { count } from "../format-count.js";
import { formatUsd } from "../tasks/cost.js";
import { uploadedNumbers, type RunPlan } from "./plan.js";
import type { SubmitRequest } from "./submit-request.js";

/** Refuses, before anything is reserved, a plan the service cannot take or the user would not pay for. */
export function checkPlan(plan: RunPlan, options: Pick<SubmitRequest, "command" | "maxCostMicros" | "mayBeEmpty">, laterMicros = 0): void {
  if (plan.kept === 0 && !options.mayBeEmpty) {
    throw new InputRejectedError("No number in the list can be checked, so nothing was uploaded.", {
      hint: "See why with --rejects rejects.csv, or bulkcheck validate.",
    });
  }
  const small = plan.parts.find((part) => part.count < plan.limits.minTaskSize);
  if (small && options.command.retryOf !== undefined) {
    throw tooFewToRetry(options.command.retryOf, small.count, plan.limits.minTaskSize, options.command.sourcePath);
  }
  if (small && plan.kept < plan.limits.minTaskSize) {
    throw new InputRejectedError(
      `A task needs at least ${count(plan.limits.minTaskSize)} numbers; this list has ${count(small.count)} to check.`,
      { hint: "Add numbers, or if your account allows smaller tasks: bulkcheck config set min-task-size N" },
    );
  }
  if (small) {
    // The list is big enough: the others were answered within --max-age, too few of them with a result to fill the task.
    throw new InputRejectedError(
      `A task needs at least ${count(plan.limits.minTaskSize)} numbers; ${count(uploadedNumbers(plan) - plan.padded)} of this list need checking, and too few of its others have a fresh result to fill the task.`,
      { hint: "Let them wait for a later run with --pad never, or check the numbers without a result again with --retry-no-result." },
    );
  }
  const large = plan.parts.find((part) => part.bytes > plan.limits.maxFileBytes);
  if (large) {
    throw new InputRejectedError(
      `The upload file would be ${count(large.bytes)} bytes, over the service's limit of ${count(plan.limits.maxFileBytes)}.`,
      { hint: "Lower max-task-size so the list is split into smaller tasks: bulkcheck config set max-task-size N" },
    );
  }
  if (options.maxCostMicros !== undefined && plan.reservationMicros + laterMicros > options.maxCostMicros) {
    const later = laterMicros > 0 ? ` with up to ${formatUsd(laterMicros)} for the later products of the chain` : "";
    throw new InsufficientBalanceError(
      `The reservation ${formatUsd(plan.reservationMicros)}${later} is over --max-cost ${formatUsd(options.maxCostMicros)}.`,
      { hint: "Raise --max-cost, or split the list." },
    );
  }
}

/**
 * A retry below the service's minimum task size: nothing the user can add to it, since it
 * holds exactly the numbers that got no result. Say so, and what can be done instead.
 */
function tooFewToRetry(taskId: string, numbers: number, minTaskSize: number, sourcePath: string | undefined): InputRejectedError {
  const list = sourcePath ?? "the list";
  return new InputRejectedError(
    `The ${count(numbers)} numbers of task ${taskId} that got no result cannot be retried on their own: the service's minimum task size is ${count(minTaskSize)} numbers, so nothing was uploaded.`,
    {
      hint: `Keep them for the next run: they are still in ${list}, and the next run of it uploads every number without a fresh result, these included. If your account allows smaller tasks: bulkcheck config set min-task-size N`,
    },
  );
}

import { InputRejectedError, InsufficientBalanceError, InterruptedError } from "../errors.js";
import type { SubmitEntry } from "../journal/journal.js";
import type { ServiceType } from "../spec/products.js";
import { formatUsd, reservationMicros, usdToMicros } from "../tasks/cost.js";
import { freshNonce } from "../tasks/idempotency.js";
import { planUploads, uploadAll, type Chunk, type UploadResult } from "../tasks/submit.js";
import type { Context } from "./context.js";
import { canPrompt, confirm } from "./prompt.js";
import { taskJson } from "./task-view.js";

export interface SubmitFlags {
  idempotencyKey?: string;
  resubmit?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  maxCost?: number;
  /** Results will go to stdout (-o -): task ids then go to stderr so they do not mix with the data. */
  idsToStderr?: boolean;
}

export interface PreparedSubmission {
  product: ServiceType;
  country: string | undefined;
  chunks: readonly Chunk[];
  entry: Pick<SubmitEntry, "source" | "preparation" | "prepared" | "retry_of">;
}

/**
 * Everything between a prepared list and task ids on stdout: the size checks,
 * the cost estimate against --max-cost and the balance, confirmation, journalled
 * idempotency keys, and the uploads. Returns undefined for --dry-run.
 */
export async function submitPrepared(ctx: Context, prepared: PreparedSubmission, flags: SubmitFlags): Promise<UploadResult[] | undefined> {
  const { printer } = ctx;
  const limits = await ctx.limits();
  checkSizes(prepared.chunks, limits);
  const price = (await ctx.prices())[prepared.product];
  const numbers = prepared.chunks.reduce((sum, chunk) => sum + chunk.count, 0);
  const estimate = reservationMicros(numbers, price);
  const plan = `${numbers} numbers in ${prepared.chunks.length} task(s) of ${prepared.product}${prepared.country ? ` for ${prepared.country}` : ""}; reservation ${formatUsd(estimate)} at ${formatUsd(price)} per number (only checked numbers are charged)`;
  printer.note(`Plan: ${plan}.`);
  if (flags.maxCost !== undefined && estimate > usdToMicros(flags.maxCost)) {
    throw new InsufficientBalanceError(`The reservation ${formatUsd(estimate)} is over --max-cost ${formatUsd(usdToMicros(flags.maxCost))}.`, {
      hint: "Raise --max-cost, or split the list.",
    });
  }
  if (flags.dryRun) {
    printer.note("Dry run: nothing was uploaded.");
    return undefined;
  }

  const journal = await ctx.journal();
  const uploads = await planUploads({
    chunks: prepared.chunks,
    product: prepared.product,
    country: prepared.country,
    installSecret: await (await ctx.config()).installSecret(),
    ...(flags.idempotencyKey ? { userKey: flags.idempotencyKey } : {}),
    ...(flags.resubmit ? { nonce: freshNonce() } : {}),
    journal,
  });
  const client = await ctx.client();
  const fresh = uploads.filter((upload) => !upload.knownTaskId);
  if (fresh.length > 0) {
    const needed = reservationMicros(fresh.reduce((sum, upload) => sum + upload.count, 0), price);
    const { balance_micros } = await client.getBalance();
    if (balance_micros < needed) {
      throw new InsufficientBalanceError(`The balance ${formatUsd(balance_micros)} cannot cover the reservation of ${formatUsd(needed)}.`, {
        hint: "Top up the account, or submit a smaller list.",
      });
    }
    if (!flags.yes && !ctx.globals.json && canPrompt(ctx.io) && !(await confirm(ctx.io, `Reserve ${formatUsd(needed)} of ${formatUsd(balance_micros)}?`))) {
      throw new InterruptedError("Cancelled; nothing was uploaded.");
    }
  }

  // Tasks are printed in list order, each as soon as those before it are known, so
  // re-runs print the same ids in the same order (and downloads merge in list order).
  const report = (result: UploadResult) => {
    const { task, replayed, upload } = result;
    if (flags.idsToStderr) printer.note(`Task ${task.id} submitted.`);
    else if (ctx.globals.json) printer.json(taskJson(task));
    else printer.data(task.id);
    if (replayed && upload.knownTaskId === undefined) {
      printer.note(`Task ${task.id} had already been created for this list by an earlier attempt whose answer was lost; the service returned it and nothing was reserved twice. Add --resubmit to force a new task.`);
    } else if (replayed) {
      printer.note(`Task ${task.id} was already submitted for this list, product and country: the service returned it and nothing was reserved again. Add --resubmit to force a new task.`);
    }
  };
  const waiting = new Map<number, UploadResult>();
  let next = 0;
  try {
    return await uploadAll({
      uploads,
      client,
      journal,
      product: prepared.product,
      country: prepared.country,
      concurrency: limits.maxInFlight,
      entry: { profile: ctx.profileName, ...prepared.entry },
      now: ctx.now,
      onUploaded(result) {
        waiting.set(result.upload.index, result);
        for (let ready = waiting.get(next); ready; ready = waiting.get(next)) {
          waiting.delete(next++);
          report(ready);
        }
      },
    });
  } finally {
    // After a failure, still report every task that was created (in list order).
    for (const index of [...waiting.keys()].sort((x, y) => x - y)) report(waiting.get(index)!);
  }
}

function checkSizes(chunks: readonly Chunk[], limits: { minTaskSize: number; maxFileBytes: number }): void {
  const total = chunks.reduce((sum, chunk) => sum + chunk.count, 0);
  if (total === 0) {
    throw new InputRejectedError("No number in the list can be checked, so nothing was uploaded.", {
      hint: "See why with --rejects rejects.csv, or bulkcheck validate.",
    });
  }
  const small = chunks.find((chunk) => chunk.count < limits.minTaskSize);
  if (small) {
    throw new InputRejectedError(`A task needs at least ${limits.minTaskSize} numbers; this list has ${small.count} to check.`, {
      hint: "Add numbers, or if your account allows smaller tasks: bulkcheck config set min-task-size N",
    });
  }
  const large = chunks.find((chunk) => chunk.bytes > limits.maxFileBytes);
  if (large) {
    throw new InputRejectedError(`The upload file would be ${large.bytes} bytes, over the service's limit of ${limits.maxFileBytes}.`, {
      hint: "Lower max-task-size so the list is split into smaller tasks: bulkcheck config set max-task-size N",
    });
  }
}

import type { ApiClient } from "../api/types.js";
import type { Limits } from "../config/resolve.js";
import { InputRejectedError, InsufficientBalanceError, InterruptedError } from "../errors.js";
import type { Journal, JournalScope, SubmitEntry } from "../journal/journal.js";
import type { ServiceType } from "../spec/products.js";
import { count } from "../format-count.js";
import { formatUsd, reservationMicros, usdToMicros } from "./cost.js";
import { countryPlans, type CountryPlan } from "./country-plan.js";
import { freshNonce } from "./idempotency.js";
import { runSchedule, type ScheduleOptions } from "./schedule.js";
import { planUploads, type Chunk, type PlannedUpload, type UploadResult } from "./submit.js";

/** A prepared list on its way to becoming tasks. */
export interface PreparedSubmission {
  product: ServiceType;
  country: string | undefined;
  chunks: readonly Chunk[];
  entry: Pick<SubmitEntry, "source" | "preparation" | "prepared" | "retry_of">;
}

export interface SubmitOptions {
  /** --idempotency-key: used as given (numbered per chunk) instead of the derived key. */
  idempotencyKey?: string;
  /** A fresh key, so the service creates new tasks for a list it has seen. */
  resubmit?: boolean;
  /** Stop after the plan: nothing is reserved or uploaded. */
  dryRun?: boolean;
  /** Refuse a reservation over this many USD. */
  maxCostUsd?: number;
}

export interface SubmitPlan {
  numbers: number;
  tasks: number;
  product: ServiceType;
  country: string | undefined;
  priceMicros: number;
  reservationMicros: number;
  /** `--country auto`: the tasks and cost of each country, in list order. */
  byCountry?: CountryPlan[];
}

/** How the uploads are scheduled and whether their tasks are waited for (see runSchedule). */
export type ScheduleSettings = Pick<
  ScheduleOptions,
  "pollIntervalMs" | "untilFinished" | "timeoutMs" | "timeoutSeconds" | "resumeCommand" | "waitResumes" | "onEvent" | "onSucceeded"
>;

export interface SubmitDeps {
  /** Built on first use: a dry run needs no API key. */
  client: () => Promise<Pick<ApiClient, "getBalance" | "submitTask" | "checkTask">>;
  journal: Journal;
  /** Read on first use: a dry run writes nothing to the config. */
  installSecret: () => Promise<string>;
  limits: Pick<Limits, "minTaskSize" | "maxFileBytes" | "maxInFlight">;
  priceMicros: number;
  /** The service and profile journalled with each upload, and within which keys are looked up. */
  scope: JournalScope;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  signal?: AbortSignal;
  /** How to schedule these uploads, decided once they are planned (their keys name the run). */
  schedule: (uploads: readonly PlannedUpload[]) => Promise<ScheduleSettings>;
  /** The plan and its cost, before anything is reserved. */
  onPlan?: (plan: SubmitPlan) => void;
  /** Asked before a reservation; without it the reservation goes ahead. True goes ahead. */
  confirmReservation?: (reservationMicros: number, balanceMicros: number) => Promise<boolean>;
  /** Each task, in list order, as soon as those before it are known; after a failure, those created anyway. */
  onTask?: (result: UploadResult) => void;
}

/**
 * Everything between a prepared list and its tasks: the size checks, the cost
 * estimate against the ceiling and the balance, confirmation, journalled
 * idempotency keys, and the scheduled uploads (and, with `untilFinished`, the
 * wait). Returns each part's task in its latest state, or undefined for a dry run.
 */
export async function submitPrepared(
  deps: SubmitDeps,
  prepared: PreparedSubmission,
  options: SubmitOptions,
): Promise<UploadResult[] | undefined> {
  checkSizes(prepared, deps.limits);
  const price = deps.priceMicros;
  const numbers = prepared.chunks.reduce((sum, chunk) => sum + chunk.count, 0);
  const estimate = reservationMicros(numbers, price);
  const byCountry = countryPlans(prepared.chunks, price);
  deps.onPlan?.({
    numbers,
    tasks: prepared.chunks.length,
    product: prepared.product,
    country: prepared.country,
    priceMicros: price,
    reservationMicros: estimate,
    ...(byCountry ? { byCountry } : {}),
  });
  if (options.maxCostUsd !== undefined && estimate > usdToMicros(options.maxCostUsd)) {
    throw new InsufficientBalanceError(
      `The reservation ${formatUsd(estimate)} is over --max-cost ${formatUsd(usdToMicros(options.maxCostUsd))}.`,
      {
        hint: "Raise --max-cost, or split the list.",
      },
    );
  }
  if (options.dryRun) return undefined;

  const uploads = await planUploads({
    chunks: prepared.chunks,
    product: prepared.product,
    country: prepared.country,
    installSecret: await deps.installSecret(),
    ...(options.idempotencyKey ? { userKey: options.idempotencyKey } : {}),
    ...(options.resubmit ? { nonce: freshNonce() } : {}),
    journal: deps.journal,
    scope: deps.scope,
    ...(prepared.entry.retry_of === undefined ? {} : { retryOf: prepared.entry.retry_of }),
  });
  const client = await deps.client();
  const fresh = uploads.filter((upload) => !upload.knownTaskId);
  if (fresh.length > 0) {
    const needed = reservationMicros(
      fresh.reduce((sum, upload) => sum + upload.count, 0),
      price,
    );
    const { balance_micros } = await client.getBalance();
    if (balance_micros < needed) {
      throw new InsufficientBalanceError(`The balance ${formatUsd(balance_micros)} cannot cover the reservation of ${formatUsd(needed)}.`, {
        hint: "Top up the account, or submit a smaller list.",
      });
    }
    if (deps.confirmReservation && !(await deps.confirmReservation(needed, balance_micros))) {
      throw new InterruptedError("Cancelled; nothing was uploaded.");
    }
  }

  const schedule = await deps.schedule(uploads);
  // Tasks are reported in list order, each as soon as those before it are known, so
  // re-runs report the same ids in the same order (and downloads merge in list order).
  const waiting = new Map<number, UploadResult>();
  let next = 0;
  try {
    return await runSchedule({
      uploads,
      client,
      journal: deps.journal,
      product: prepared.product,
      country: prepared.country,
      entry: { ...deps.scope, ...prepared.entry },
      now: deps.now,
      sleep: deps.sleep,
      random: deps.random,
      signal: deps.signal,
      maxInFlight: deps.limits.maxInFlight,
      ...schedule,
      onEvent(event) {
        if (event.type === "uploaded") {
          waiting.set(event.result.upload.index, event.result);
          for (let ready = waiting.get(next); ready; ready = waiting.get(next)) {
            waiting.delete(next++);
            deps.onTask?.(ready);
          }
        }
        schedule.onEvent?.(event);
      },
    });
  } finally {
    // After a failure, still report every task that was created (in list order).
    for (const index of [...waiting.keys()].sort((x, y) => x - y)) deps.onTask?.(waiting.get(index)!);
  }
}

function checkSizes({ chunks, entry }: PreparedSubmission, limits: Pick<Limits, "minTaskSize" | "maxFileBytes">): void {
  const total = chunks.reduce((sum, chunk) => sum + chunk.count, 0);
  if (total === 0) {
    throw new InputRejectedError("No number in the list can be checked, so nothing was uploaded.", {
      hint: "See why with --rejects rejects.csv, or bulkcheck validate.",
    });
  }
  const small = chunks.find((chunk) => chunk.count < limits.minTaskSize);
  if (small && entry.retry_of !== undefined) throw tooFewToRetry(entry.retry_of, small.count, limits.minTaskSize, entry.source.path);
  if (small) {
    throw new InputRejectedError(
      `A task needs at least ${count(limits.minTaskSize)} numbers; this list has ${count(small.count)} to check.`,
      {
        hint: "Add numbers, or if your account allows smaller tasks: bulkcheck config set min-task-size N",
      },
    );
  }
  const large = chunks.find((chunk) => chunk.bytes > limits.maxFileBytes);
  if (large) {
    throw new InputRejectedError(
      `The upload file would be ${count(large.bytes)} bytes, over the service's limit of ${count(limits.maxFileBytes)}.`,
      {
        hint: "Lower max-task-size so the list is split into smaller tasks: bulkcheck config set max-task-size N",
      },
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
      hint: `Keep them for the next run: they are still in ${list}, and the next submit of it checks them again with the rest (add --resubmit if the list has not changed). If your account allows smaller tasks: bulkcheck config set min-task-size N`,
    },
  );
}

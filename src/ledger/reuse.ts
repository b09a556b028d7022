import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { IdentifierSet } from "../prepare/identifier-set.js";
import { UploadSpool, type UploadChunk, type UploadTarget } from "../prepare/upload-writer.js";
import type { Scope, Store } from "../store/store.js";

/**
 * The ledger's latest result of every number of a product in a scope, as of a task
 * reference: number → the task whose result is the latest, and each such task's date.
 */
export interface LatestResults {
  byNumber: IdentifierSet;
  checkedAt: ReadonlyMap<number, string>;
}

/**
 * Reads the latest result of every number (newest first, so the first seen is the
 * latest) from tasks up to `maxTaskRef`. Memory is the index's, ~20 bytes a number.
 */
export async function latestResults(store: Store, scope: Scope, product: string, maxTaskRef: number): Promise<LatestResults> {
  const byNumber = new IdentifierSet();
  const refs = new Set<number>();
  for await (const batch of store.freshResults(scope, product, "", maxTaskRef)) {
    for (const { identifier, taskRef } of batch) {
      byNumber.firstLineOf(identifier, taskRef);
      refs.add(taskRef);
    }
  }
  return { byNumber, checkedAt: await store.checkedAtOf([...refs]) };
}

/** What reuse made of one list (or one country's list): what is uploaded, and what the ledger serves. */
export interface ReuseSplit {
  /** The numbers to upload, split into balanced parts of at most maxTaskSize. */
  parts: UploadChunk[];
  kept: number;
  reused: number;
  /** Fresh numbers uploaded anyway to reach the minimum task size (the oldest fresh results are checked again). */
  padded: number;
  /** The dates of the reused results. */
  reusedFrom?: { oldest: string; newest: string };
  /** Numbers uploaded although the ledger has a result for them, older than the freshness limit. */
  stale: { numbers: number; oldest?: string; newest?: string };
}

export interface SplitOptions {
  /** The kept list: one identifier per line, in list order. */
  list: UploadChunk;
  latest: LatestResults | undefined;
  /** Results checked at or after this are fresh (ISO time); undefined reuses nothing. */
  freshSince: string | undefined;
  minTaskSize: number;
  maxTaskSize: number;
  /** Where the parts are written. */
  target: UploadTarget;
  /** Filled with each reused number's task reference, for the output. */
  reusedNumbers: IdentifierSet;
  /** Filled with the tasks whose results are reused. */
  reusedTasks: Set<number>;
}

/**
 * Splits a kept list into what is uploaded and what the ledger serves: a number with a
 * fresh result is reused, every other number is uploaded, in list order. When the
 * numbers to upload are fewer than a task's minimum (but there are some), the oldest
 * fresh results are checked again to fill the task: the service cannot take fewer, and
 * those are the results most worth renewing. Deterministic for a given ledger state, so a
 * run continued later splits its list exactly as it did (its parts' hashes say so).
 */
export async function splitByFreshness(options: SplitOptions): Promise<ReuseSplit> {
  const { latest, freshSince } = options;
  const freshRef = (identifier: number): number | undefined => {
    if (!latest || freshSince === undefined) return undefined;
    const ref = latest.byNumber.get(identifier);
    return ref !== undefined && latest.checkedAt.get(ref)! >= freshSince ? ref : undefined;
  };
  // Each date once, in order: a fresh number's place in the renewal order is its date's rank, then its position.
  const dates = [...new Set(latest?.checkedAt.values() ?? [])].sort();
  const rank = new Map(dates.map((date, index) => [date, index]));
  let renewalOrder = new Float64Array(1024);
  let kept = 0;
  let reused = 0;
  const reusedDates = new DateRange();
  const stale = new DateRange();
  for await (const identifiers of identifierBatches(options.list.path)) {
    for (const identifier of identifiers) {
      const position = kept++;
      const ref = freshRef(identifier);
      if (ref !== undefined) {
        if (reused === renewalOrder.length) renewalOrder = grown(renewalOrder);
        renewalOrder[reused++] = rank.get(latest!.checkedAt.get(ref)!)! * 2 ** 32 + position;
        continue;
      }
      const older = latest?.byNumber.get(identifier);
      if (older !== undefined) stale.add(latest!.checkedAt.get(older)!);
    }
  }
  const toUpload = kept - reused;
  const padded = toUpload > 0 && toUpload < options.minTaskSize ? Math.min(options.minTaskSize - toUpload, reused) : 0;
  const checkedAgain = new Set(Array.from(renewalOrder.subarray(0, reused).sort().subarray(0, padded), (order) => order % 2 ** 32));
  const spool = await UploadSpool.create(options.target);
  try {
    let position = 0;
    for await (const identifiers of identifierBatches(options.list.path)) {
      for (const identifier of identifiers) {
        const ref = checkedAgain.has(position++) ? undefined : freshRef(identifier);
        if (ref === undefined) spool.add(identifier);
        else {
          options.reusedNumbers.firstLineOf(identifier, ref);
          options.reusedTasks.add(ref);
          reusedDates.add(latest!.checkedAt.get(ref)!);
        }
      }
      await spool.flush();
    }
    const parts = await spool.finish(options.maxTaskSize);
    if (toUpload + padded === 0) await Promise.all(parts.map((part) => rm(part.path, { force: true })));
    const split: ReuseSplit = {
      parts: toUpload + padded === 0 ? [] : parts,
      kept,
      reused: reused - padded,
      padded,
      stale: { numbers: stale.count, ...stale.range() },
    };
    const from = reusedDates.range();
    if (from.oldest !== undefined) split.reusedFrom = { oldest: from.oldest, newest: from.newest! };
    return split;
  } catch (error) {
    await spool.discard();
    throw error;
  }
}

/** The earliest and latest of some ISO dates, and how many there were. */
export class DateRange {
  count = 0;
  #oldest: string | undefined;
  #newest: string | undefined;

  add(date: string): void {
    this.count++;
    if (this.#oldest === undefined || date < this.#oldest) this.#oldest = date;
    if (this.#newest === undefined || date > this.#newest) this.#newest = date;
  }

  range(): { oldest?: string; newest?: string } {
    return this.#oldest === undefined ? {} : { oldest: this.#oldest, newest: this.#newest! };
  }
}

function grown(array: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const larger = new Float64Array(array.length * 2);
  larger.set(array);
  return larger;
}

/** The identifiers of a prepared list file as numbers, in order, a batch at a time. */
async function* identifierBatches(path: string): AsyncGenerator<number[]> {
  // A prepared list holds one identifier per line: read in chunks, a batch of numbers at a time.
  let tail = "";
  for await (const chunk of createReadStream(path, { encoding: "latin1", highWaterMark: 1 << 20 })) {
    const lines = (tail + (chunk as string)).split("\n");
    tail = lines.pop()!;
    yield lines.filter((line) => line !== "").map(Number);
  }
  if (tail !== "") yield [Number(tail)];
}

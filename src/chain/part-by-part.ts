import { join } from "node:path";
import { ApiError } from "../api/errors.js";
import { ServiceUnavailableError, TaskFailedError } from "../errors.js";
import type { UploadChunk } from "../prepare/index.js";
import { ApiCode } from "../spec/codes.js";
import { identifierKey } from "../spec/identifier-key.js";
import type { StagedResults } from "../tasks/download.js";
import { writeKept } from "../tasks/list-slice.js";
import type { UploadResult } from "../tasks/submit.js";
import type { RunOutcome } from "../run/submit-request.js";
import type { ChainStep } from "./chain.js";
import { selectNumbers } from "./selection.js";

/** Consecutive parts of the first product's run, whose results are in, and the numbers they select for the next product. */
export interface EarlyParts {
  /** 0 for the first such group of parts, 1 for the next… */
  index: number;
  /** The first product's parts it covers (their indexes in its plan), and how many parts that plan has. */
  first: number;
  last: number;
  of: number;
  /** The numbers selected, a list per part (each keeping its country). */
  lists: UploadChunk[];
  selected: number;
}

/** How many times a task's minimum the last part should select, at the share seen so far, for groups to be bought. */
const REST_MARGIN = 1.5;

/** A run of the next product part by part, and the parts it was bought for. */
export type EarlyRun = RunOutcome & { parts: EarlyParts };

/** The parts of a group as people count them: `2 of 5`, `1–3 of 5`. */
export function partRange({ first, last, of }: EarlyParts): string {
  return `${first === last ? first + 1 : `${first + 1}–${last + 1}`} of ${of}`;
}

/** Why part-by-part buying stopped before the first product's run ended: the rest of the numbers wait for the whole. */
export type EarlyStop = { reason: "task failed"; error: TaskFailedError } | { reason: "quota"; error: ServiceUnavailableError };

export interface PartByPartOptions {
  step: ChainStep;
  /** The next product's smallest task: a group of parts closes once it selects at least this many numbers. */
  minTaskSize: number;
  /** A first-product task's staged result, as rows. */
  staged(results: readonly UploadResult[]): Promise<StagedResults>;
  /**
   * Resolves when a group may start: once the first product has uploaded every part (a group
   * then takes room its last tasks leave idle, never room the first product is waiting for), or
   * once its run has ended (the group is then left to the chain's run unless open already).
   */
  room(): Promise<void>;
  /** How many numbers the first product's last part has. */
  lastPartSize(): number;
  /** Buys the next product on a group's numbers: its run, waited for to the end of its tasks. */
  run(parts: EarlyParts): Promise<RunOutcome | undefined>;
  /** Whether a group's run is open already (a chain carried on after a kill): it is carried on even once the first product's run has ended. */
  isOpen(parts: EarlyParts): Promise<boolean>;
  /** Told when buying part by part stops early (the numbers go to the run after the first product's). */
  onStop(stop: EarlyStop, parts: EarlyParts): Promise<void>;
  dir: string;
  signal: AbortSignal;
}

/**
 * The next product of a chain bought part by part: as the first product's tasks finish, in
 * list order, their results select the next product's numbers, and each group of consecutive
 * parts that selects a task's worth is bought by a run of its own while the first product's
 * other tasks go on. The last part is never grouped: what is left when the first product's run
 * ends (its last part, a group too small, the numbers the ledger served) is the chain's whole
 * run of the product, which checks the rest (see submitChain). Groups depend only
 * on the results, so a chain carried on after a kill makes the same groups and finds their
 * runs. A group's failed task or a quota with no room stops buying part by part: the run after
 * the first product's takes those numbers.
 */
export class PartByPart {
  readonly #done = new Map<number, UploadResult>();
  readonly #outcomes: EarlyRun[] = [];
  #of = 0;
  /** The first part not yet in a group, and the first whose selection is not yet counted. */
  #next = 0;
  #cursor = 0;
  #pending: UploadChunk[] = [];
  #groups = 0;
  #stopped = false;
  /** The first product's numbers read so far, and how many of them were selected. */
  readonly #read = { numbers: 0, selected: 0 };
  #ended = false;
  #buying = false;
  #error: { error: unknown } | undefined;
  /** Selections are worked out one at a time, in part order; groups' runs one after another. */
  #selecting = Promise.resolve();
  #running = Promise.resolve();

  constructor(private readonly o: PartByPartOptions) {}

  /** A first-product task succeeded and its result is staged. */
  partDone(result: UploadResult): void {
    this.#of = result.upload.of;
    this.#done.set(result.upload.index, result);
    this.#selecting = this.#selecting.then(() => this.#advance()).catch((error: unknown) => this.#fail(error));
  }

  /** No more groups start (the first product's run failed). */
  stop(): void {
    this.#stopped = true;
  }

  /**
   * The first product's run has ended: the chain's run of the product, with every task it needs
   * at once, is quicker than groups one after another. Groups not yet started are left to it,
   * but for those whose run is open already (carried on after a kill: their claims and keys stand).
   */
  end(): void {
    this.#ended = true;
  }

  /** Once the first product's run has ended: waits for the groups' runs, and returns them (an error of theirs is thrown). */
  async settle(): Promise<EarlyRun[]> {
    await this.#selecting;
    await this.#running;
    if (this.#error) throw this.#error.error;
    return this.#outcomes;
  }

  async #advance(): Promise<void> {
    // The last part is left to the run after the first product's: a group must never be all that is left.
    while (!this.#stopped && this.#cursor < this.#of - 1 && this.#done.has(this.#cursor)) {
      const result = this.#done.get(this.#cursor)!;
      const list = await this.#selected(result);
      this.#read.numbers += result.upload.count;
      this.#read.selected += list.count;
      if (list.count > 0) this.#pending.push(list);
      this.#cursor++;
      const selected = this.#pending.reduce((sum, part) => sum + part.count, 0);
      if (selected < this.o.minTaskSize || !this.#restFillsATask()) continue;
      const parts: EarlyParts = {
        index: this.#groups++,
        first: this.#next,
        last: this.#cursor - 1,
        of: this.#of,
        lists: this.#pending,
        selected,
      };
      this.#pending = [];
      this.#next = this.#cursor;
      this.#running = this.#running.then(() => this.#buy(parts));
    }
  }

  /**
   * Whether the last part, at the share the parts read so far select, would still fill a task on
   * its own (with a margin): what the chain's run of the product checks must not fall below the
   * task minimum because groups took the rest. Where it would, nothing is bought part by part.
   */
  #restFillsATask(): boolean {
    const share = this.#read.numbers > 0 ? this.#read.selected / this.#read.numbers : 0;
    return share * this.o.lastPartSize() >= REST_MARGIN * this.o.minTaskSize;
  }

  /** The numbers of one first-product part its result selects, in the part's order. */
  async #selected(result: UploadResult): Promise<UploadChunk> {
    const { condition } = this.o.step;
    const selection = condition ? await selectNumbers(condition, await this.o.staged([result]), this.o.signal) : undefined;
    const keep = (identifier: string) => !selection?.selected || selection.selected.has(identifierKey(identifier));
    const list = await writeKept(result.upload.path, keep, join(this.o.dir, `part-${result.upload.index}.txt`));
    return result.upload.country === undefined ? list : { ...list, country: result.upload.country };
  }

  /** Whether a group's run is under way (its tasks may hold the service's room). */
  get buying(): boolean {
    return this.#buying;
  }

  async #buy(parts: EarlyParts): Promise<void> {
    await this.o.room();
    if (this.#stopped || (this.#ended && !(await this.o.isOpen(parts)))) return;
    this.#buying = true;
    try {
      const outcome = await this.o.run(parts);
      if (outcome) this.#outcomes.push({ ...outcome, parts });
    } catch (error) {
      const stop = earlyStop(error);
      if (!stop) return this.#fail(error);
      this.#stopped = true;
      await this.o.onStop(stop, parts);
    } finally {
      this.#buying = false;
    }
  }

  #fail(error: unknown): void {
    this.#stopped = true;
    this.#error ??= { error };
  }
}

/** The failures that stop buying part by part and leave the numbers to the whole run: a failed task, no room for a task. */
function earlyStop(error: unknown): EarlyStop | undefined {
  if (error instanceof TaskFailedError) return { reason: "task failed", error };
  const quota =
    error instanceof ServiceUnavailableError && error.cause instanceof ApiError && error.cause.apiCode === ApiCode.QUOTA_EXHAUSTED;
  return quota ? { reason: "quota", error } : undefined;
}

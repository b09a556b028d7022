import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { IdentifierSet } from "../spec/identifier-set.js";
import { splitUploadFile, UploadSpool, type UploadChunk, type UploadTarget } from "../prepare/upload-writer.js";
import type { Scope, Store, TaskRecord } from "../store/store.js";

/**
 * The ledger's latest answer for every number of a product in a scope, as of a task
 * reference: number → answerCode(task, whether that task has a result row for it), and each
 * answering task's date and whether it is still in flight.
 */
export interface LatestAnswers {
  byNumber: IdentifierSet;
  tasks: ReadonlyMap<number, AnsweringTask>;
}

export interface AnsweringTask {
  /** When it was checked (first seen succeeded); while in flight, when it was submitted. */
  date: string;
  inFlight: boolean;
  taskId?: string;
  runId?: string;
}

/** How a number's answer is kept in an IdentifierSet: its task's reference, and whether that task has a result row for it. */
function answerCode(taskRef: number, withResult: boolean): number {
  return taskRef * 2 + (withResult ? 1 : 0);
}

function answerOf(code: number): { taskRef: number; withResult: boolean } {
  return { taskRef: Math.floor(code / 2), withResult: code % 2 === 1 };
}

/** Which answers count, as the run's journalled rule says (see ReuseRule). */
export interface AnswerRule {
  asOfTaskRef: number;
  /** Tasks dated before this answer nothing fresh: their numbers are not read (their results still are, for what reuse would save). */
  freshSince?: string;
  /**
   * Which tasks count as in flight: every task in flight now (`now`, a run being planned),
   * or those a run counted when it was planned, whatever they have become since (so a
   * continued run plans its parts again exactly). With either, a number in flight or checked
   * without a result counts as answered; absent (runs planned before bulkcheck kept tasks'
   * numbers), results alone do.
   */
  inFlight?: readonly number[] | "now";
}

/**
 * Reads the latest answer of every number: the results (newest first, so the first seen is
 * the latest) from tasks up to `asOfTaskRef`, then, where the rule counts them, the numbers
 * of tasks still in flight and the numbers a recorded task answered without a result (those
 * of its numbers without its result), each replacing an older answer. A failed task
 * answered nothing. Planning now, the claims of the runs in `liveClaims` (their parts
 * written, not yet answered with a task id) are in flight too. Memory is the index's, ~20
 * bytes a number.
 */
export async function latestAnswers(
  store: Store,
  scope: Scope,
  product: string,
  rule: AnswerRule,
  liveClaims: ReadonlySet<string> = new Set(),
): Promise<LatestAnswers> {
  const byNumber = new IdentifierSet();
  const recorded = new Set<number>();
  for await (const batch of store.ledger.latest(scope, product, rule.asOfTaskRef)) {
    for (const { identifier, taskRef } of batch) {
      byNumber.firstLineOf(identifier, answerCode(taskRef, true));
      recorded.add(taskRef);
    }
  }
  const tasks = new Map<number, AnsweringTask>();
  for (const [ref, date] of await store.tasks.checkedAt([...recorded])) tasks.set(ref, { date, inFlight: false });
  if (rule.inFlight === undefined) return { byNumber, tasks };
  const journalled = rule.inFlight === "now" ? undefined : new Set(rule.inFlight);
  for (const task of await store.tasks.answering(scope, product, rule.asOfTaskRef)) {
    const answering = answeringTask(task, journalled, liveClaims);
    if (!answering || (rule.freshSince !== undefined && answering.date < rule.freshSince)) continue;
    tasks.set(task.ref, answering);
    const withResult = answerCode(task.ref, true);
    for await (const numbers of store.tasks.numbers(task.ref)) {
      for (const identifier of numbers) {
        // A number this task answered with a result is in byNumber with it already (or with a newer answer).
        const had = byNumber.get(identifier);
        if (had === withResult) continue;
        if (had === undefined || tasks.get(answerOf(had).taskRef)!.date < answering.date)
          byNumber.set(identifier, answerCode(task.ref, false));
      }
    }
  }
  return { byNumber, tasks };
}

/**
 * Whether a task's numbers count as answered, and how: recorded, or in flight (submitted or
 * claimed by a live run, not failed, not yet recorded).
 */
function answeringTask(
  task: TaskRecord,
  journalledInFlight: ReadonlySet<number> | undefined,
  liveClaims: ReadonlySet<string>,
): AnsweringTask | undefined {
  const ids = { ...(task.taskId === undefined ? {} : { taskId: task.taskId }), ...(task.runId === undefined ? {} : { runId: task.runId }) };
  const submitted = task.submittedAt ?? task.checkedAt;
  if (journalledInFlight?.has(task.ref)) return submitted === undefined ? undefined : { date: submitted, inFlight: true, ...ids };
  if (task.recordedAt !== undefined && task.checkedAt !== undefined) return { date: task.checkedAt, inFlight: false, ...ids };
  // Planned before: only the tasks it counted in flight do (journalledInFlight); planning now: every task not over.
  if (journalledInFlight || task.status === "failed" || submitted === undefined) return undefined;
  // A claim counts while its run's holder lives: one whose process died lets its numbers go, as a lease does.
  if (task.taskId === undefined && (task.runId === undefined || !liveClaims.has(task.runId))) return undefined;
  return { date: submitted, inFlight: true, ...ids };
}

/** What reuse made of one list (or one country's list): what is uploaded, and what the ledger serves. */
export interface ReuseSplit {
  /** The numbers to upload, split into balanced parts of at most maxTaskSize. */
  parts: UploadChunk[];
  kept: number;
  /** Numbers with a fresh result, which the output takes from the ledger. */
  reused: number;
  /** Fresh numbers uploaded anyway to reach the minimum task size (the oldest fresh results are checked again). */
  padded: number;
  /** The dates of the padded numbers' results. */
  paddedFrom?: { oldest: string; newest: string };
  /** Numbers the service checked without a result within the freshness limit: not uploaded again. */
  noResult: number;
  /** Numbers without a result uploaded again because the run asked to retry them. */
  retriedNoResult: number;
  /** Numbers in a task still in flight (submitted within the freshness limit): their results come from it. */
  inFlight: number;
  /** Numbers that need a result but wait for a later run: too few for a task, and padding was refused (or waits, see below). */
  waiting: number;
  /** Of those, the numbers that wait for tasks in flight: too few for a task until those tasks' results can fill it. */
  waitingForInFlight: number;
  /** The dates of the reused results. */
  reusedFrom?: { oldest: string; newest: string };
  /** Numbers uploaded although the ledger has a result for them, older than the freshness limit. */
  stale: { numbers: number; oldest?: string; newest?: string };
}

/** When the numbers that need a result are fewer than a task's minimum: fill the task with the oldest fresh results, or let them wait. */
export type PadPolicy = "oldest" | "never";

export interface SplitOptions {
  /** The kept list: one identifier per line, in list order. */
  list: UploadChunk;
  answers: LatestAnswers | undefined;
  /** Answers dated at or after this are fresh (ISO time); undefined reuses nothing. */
  freshSince: string | undefined;
  minTaskSize: number;
  maxTaskSize: number;
  pad: PadPolicy;
  /** Upload the numbers checked without a result too. */
  retryNoResult: boolean;
  /** Where the parts are written. */
  target: UploadTarget;
  /** Filled with each number the run does not upload and takes from a task (its result, or the task in flight), with that task's reference. */
  reusedNumbers: IdentifierSet;
  /** Filled with the tasks whose results are reused. */
  reusedTasks: Set<number>;
  /** Filled with the tasks in flight whose results the run takes once they finish. */
  inFlightTasks: Set<number>;
  /** Filled with the numbers that wait for a later run (see ReuseSplit.waiting), so outputs can tell them from numbers without a result. */
  waitingNumbers?: IdentifierSet;
}

/** What the ledger says of one number: nothing to reuse (undefined), or a fresh answer of one kind. */
type FreshAnswer = { kind: "result" | "no result" | "in flight"; taskRef: number; date: string };

/**
 * Splits a kept list into what is uploaded and what is served otherwise: a number with a
 * fresh result is reused, a number in a task in flight is taken from it, a number checked
 * without a result is not checked again (unless asked); every other number needs a result
 * and is uploaded, in list order. When those are fewer than a task's minimum (but there are
 * some), the oldest fresh results are checked again to fill the task (or, with the pad
 * policy `never`, nothing is uploaded and they wait): the service cannot take fewer, and
 * those are the results most worth renewing. A list with nothing that needs a result
 * uploads nothing. Deterministic for a given ledger state, so a run continued later splits
 * its list exactly as it did (its parts' hashes say so).
 */
export async function splitByFreshness(options: SplitOptions): Promise<ReuseSplit> {
  const { answers, freshSince } = options;
  if (!answers || answers.byNumber.size === 0) return uploadEverything(options);
  // Read once, walked twice (8 bytes a number): parsing the list's file again cost as much as preparing it.
  const identifiers = await readIdentifiers(options.list);
  const freshAnswer = (identifier: number): FreshAnswer | undefined => {
    if (!answers || freshSince === undefined) return undefined;
    const code = answers.byNumber.get(identifier);
    if (code === undefined) return undefined;
    const { taskRef, withResult } = answerOf(code);
    const task = answers.tasks.get(taskRef)!;
    if (task.date < freshSince) return undefined;
    return { kind: task.inFlight ? "in flight" : withResult ? "result" : "no result", taskRef, date: task.date };
  };
  /** Whether a number is uploaded unless it pads a task: it has no fresh answer, or asked to retry. */
  const needsResult = (answer: FreshAnswer | undefined) => answer === undefined || (answer.kind === "no result" && options.retryNoResult);
  // Each date once, in order: a fresh result's place in the renewal order is its date's rank, then its position.
  const dates = [...new Set([...(answers?.tasks.values() ?? [])].map((task) => task.date))].sort();
  const rank = new Map(dates.map((date, index) => [date, index]));
  let renewalOrder = new Float64Array(1024);
  let kept = 0;
  let fresh = 0;
  let needed = 0;
  let inFlight = 0;
  const stale = new DateRange();
  for (const identifier of identifiers) {
    const position = kept++;
    const answer = freshAnswer(identifier);
    if (answer?.kind === "in flight") inFlight++;
    if (answer?.kind === "result") {
      if (fresh === renewalOrder.length) renewalOrder = grown(renewalOrder);
      renewalOrder[fresh++] = rank.get(answer.date)! * 2 ** 32 + position;
    }
    if (!needsResult(answer)) continue;
    needed++;
    const older = answers.byNumber.get(identifier);
    if (older !== undefined && answer === undefined) stale.add(answers.tasks.get(answerOf(older).taskRef)!.date);
  }
  const short = needed > 0 && needed < options.minTaskSize;
  // Too few to fill a task with fresh results while others of the list are in flight: they wait for those
  // tasks, whose results then fill it (a task of the service's minimum is never made of numbers in flight).
  const waitingForInFlight = short && options.pad !== "never" && needed + fresh < options.minTaskSize && inFlight > 0 ? needed : 0;
  const waiting = short && options.pad === "never" ? needed : waitingForInFlight;
  const padded = short && waiting === 0 ? Math.min(options.minTaskSize - needed, fresh) : 0;
  const checkedAgain = new Set(Array.from(renewalOrder.subarray(0, fresh).sort().subarray(0, padded), (order) => order % 2 ** 32));
  const counts = { reused: 0, noResult: 0, retriedNoResult: 0, inFlight: 0 };
  const reusedDates = new DateRange();
  const paddedDates = new DateRange();
  const spool = await UploadSpool.create(options.target);
  try {
    for (let position = 0; position < identifiers.length; position++) {
      if (position % FLUSH_EVERY === 0) await spool.flush();
      const identifier = identifiers[position]!;
      const answer = freshAnswer(identifier);
      if (checkedAgain.has(position)) {
        paddedDates.add(answer!.date);
        spool.add(identifier);
      } else if (needsResult(answer)) {
        if (waiting > 0) {
          options.waitingNumbers?.firstLineOf(identifier, 0);
          continue;
        }
        if (answer) counts.retriedNoResult++;
        spool.add(identifier);
      } else if (answer!.kind === "no result") counts.noResult++;
      else {
        options.reusedNumbers.firstLineOf(identifier, answer!.taskRef);
        if (answer!.kind === "in flight") {
          counts.inFlight++;
          options.inFlightTasks.add(answer!.taskRef);
        } else {
          counts.reused++;
          options.reusedTasks.add(answer!.taskRef);
          reusedDates.add(answer!.date);
        }
      }
    }
    const parts = await spool.finish(options.maxTaskSize);
    const uploads = needed - waiting + padded > 0;
    if (!uploads) await Promise.all(parts.map((part) => rm(part.path, { force: true })));
    return {
      parts: uploads ? parts : [],
      kept,
      ...counts,
      padded,
      waiting,
      waitingForInFlight,
      stale: { numbers: stale.count, ...stale.range() },
      ...dateRange("reusedFrom", reusedDates),
      ...dateRange("paddedFrom", paddedDates),
    };
  } catch (error) {
    await spool.discard();
    throw error;
  }
}

/** Numbers added to the upload between two writes of its filled buffers. */
const FLUSH_EVERY = 65_536;

/** A list with nothing in the ledger to reuse: every number is uploaded, in parts cut from the prepared file as it is. */
async function uploadEverything(options: SplitOptions): Promise<ReuseSplit> {
  const kept = options.list.count;
  const waiting = kept > 0 && kept < options.minTaskSize && options.pad === "never" ? kept : 0;
  const parts = kept > 0 && waiting === 0 ? await splitUploadFile(options.list, options.target, options.maxTaskSize) : [];
  // Fewer numbers than a task's minimum: reading them again is short.
  if (waiting > 0 && options.waitingNumbers) {
    for await (const batch of identifierBatches(options.list.path))
      for (const identifier of batch) options.waitingNumbers.firstLineOf(identifier, 0);
  }
  return {
    parts,
    kept,
    reused: 0,
    noResult: 0,
    retriedNoResult: 0,
    inFlight: 0,
    padded: 0,
    waiting,
    waitingForInFlight: 0,
    stale: { numbers: 0 },
  };
}

/** The identifiers of a prepared list, in order. */
async function readIdentifiers(list: UploadChunk): Promise<Float64Array> {
  const identifiers = new Float64Array(list.count);
  let at = 0;
  for await (const batch of identifierBatches(list.path)) {
    identifiers.set(batch, at);
    at += batch.length;
  }
  return identifiers.subarray(0, at);
}

function dateRange<K extends string>(key: K, dates: DateRange): { [key in K]?: { oldest: string; newest: string } } {
  const { oldest, newest } = dates.range();
  return (oldest === undefined ? {} : { [key]: { oldest, newest: newest! } }) as { [key in K]?: { oldest: string; newest: string } };
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

/**
 * The identifiers of a prepared list file as numbers, in order, a batch at a time. A prepared
 * list holds one identifier (digits) per line: read as bytes, each number added up digit by
 * digit, three to five times as fast as splitting the text into lines and parsing each.
 */
export async function* identifierBatches(path: string): AsyncGenerator<Float64Array> {
  let number = 0;
  let digits = 0;
  // A line has a digit and its newline at least: a read of READ_BYTES holds at most half as many numbers.
  const batch = new Float64Array(READ_BYTES / 2 + 1);
  for await (const chunk of createReadStream(path, { highWaterMark: READ_BYTES })) {
    const bytes = chunk as Buffer;
    let count = 0;
    for (let at = 0; at < bytes.length; at++) {
      const byte = bytes[at]!;
      if (byte === NEWLINE) {
        if (digits > 0) batch[count++] = number;
        number = 0;
        digits = 0;
      } else {
        // Anything but a digit makes the line's number NaN, as Number() reads it.
        number = byte >= ZERO && byte <= NINE ? number * 10 + (byte - ZERO) : Number.NaN;
        digits++;
      }
    }
    yield batch.slice(0, count);
  }
  if (digits > 0) yield Float64Array.of(number);
}

const READ_BYTES = 1 << 20;
const NEWLINE = 0x0a;
const ZERO = 0x30;
const NINE = 0x39;

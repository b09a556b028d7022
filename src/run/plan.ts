import type { Limits } from "../config/resolve.js";
import { DateRange, latestAnswers, splitByFreshness, type LatestAnswers, type PadPolicy } from "../ledger/reuse.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import type { UploadChunk } from "../prepare/upload-writer.js";
import type { Scope, Store } from "../store/store.js";
import { reservationMicros } from "../tasks/cost.js";
import { countryPlans, type CountryPlan } from "../tasks/country-plan.js";
import { listFingerprint } from "./identity.js";

/** One part of a run: a file of numbers that becomes one task. */
export interface PlannedPart {
  index: number;
  count: number;
  bytes: number;
  sha256: string;
  /** Under `--country auto`: the country of its task. */
  country?: string;
}

/**
 * How a run reuses the ledger: answers dated at or after `freshSince`, as the ledger stood
 * at `asOfTaskRef`. Runs planned before bulkcheck kept tasks' numbers have only these three
 * fields, and count results alone (and always pad), so they are carried on as planned.
 */
export interface ReuseRule {
  maxAgeMs: number;
  freshSince: string;
  asOfTaskRef: number;
  /** The tasks in flight whose results the run takes (see AnswerRule); present: numbers in flight and without a result count as checked. */
  inFlight?: number[];
  pad?: PadPolicy;
  retryNoResult?: boolean;
}

/** A task in flight, submitted by another run, whose results a run takes for some of its numbers. */
export interface InFlightTask {
  ref: number;
  /** Absent for a claim: a part another run wrote and is uploading, whose task id is not known yet. */
  taskId?: string;
  runId?: string;
}

/** The rule of a run being planned now: every task in flight now counts (the plan journals which did). */
export type NewReuseRule = Omit<ReuseRule, "inFlight"> & { inFlight: "now" };

/**
 * What a run decided before its first upload, journalled with it and never recomputed:
 * a continued run uploads exactly these parts, even if planning now would come out
 * otherwise (a setting or the ledger changed meanwhile).
 */
export interface RunPlan {
  version: 1;
  /** The fingerprint of the prepared list (see listFingerprint): a continued run's list must still have it. */
  list: string;
  kept: number;
  reuse?: ReuseRule;
  /** Numbers whose fresh ledger result the output takes instead of a check. */
  reused: number;
  /** Fresh numbers checked again to fill a task up to the minimum size. */
  padded: number;
  /** The padded numbers' results' dates, and what checking them again reserves. */
  paddedFrom?: { oldest: string; newest: string };
  paddedMicros?: number;
  /** Numbers checked without a result within --max-age: not uploaded again. */
  noResult?: number;
  /** Numbers without a result uploaded again (--retry-no-result). */
  retriedNoResult?: number;
  /** Numbers in tasks still in flight, and those tasks: their results are the run's once they finish. */
  inFlight?: { numbers: number; tasks: InFlightTask[] };
  /** Numbers that need a result but wait for a later run (too few for a task, and --pad never; or see waitingForInFlight). */
  waiting?: number;
  /**
   * Of those, the numbers too few for a task until the tasks in flight finish, whose results
   * can then fill it: a run that waits follows those tasks and plans again.
   */
  waitingForInFlight?: number;
  reusedFrom?: { oldest: string; newest: string };
  /** Numbers uploaded although the ledger has an older result for them (older than --max-age). */
  stale?: {
    numbers: number;
    oldest?: string;
    newest?: string;
    /** The --max-age that would reuse them, and what the run planned with it would reserve (see withLongerMaxAge). */
    longerMaxAge?: { maxAgeMs: number; reservationMicros: number };
  };
  parts: PlannedPart[];
  limits: Pick<Limits, "minTaskSize" | "maxTaskSize" | "maxFileBytes">;
  priceMicros: number;
  /** What the upload reserves: the uploaded numbers at the price. */
  reservationMicros: number;
  /** What reusing saved: the reused numbers at the price. */
  savedMicros: number;
  byCountry?: CountryPlan[];
}

/** The prepared list, whole or by country, as preparation wrote it (one file per country under --country auto). */
export type PreparedLists = readonly UploadChunk[];

export interface PlanInput {
  lists: PreparedLists;
  limits: RunPlan["limits"];
  priceMicros: number;
  /** Where the parts' files go. */
  dir: string;
  /**
   * The ledger to reuse from, with the rule; without, every kept number is uploaded. Planning
   * now, `liveClaims` are the runs whose claims count in flight (see liveClaimants).
   */
  reuse?: { store: Store; scope: Scope; product: string; rule: ReuseRule | NewReuseRule; liveClaims?: ReadonlySet<string> };
}

/** A plan and what it needs to carry out: the parts' files, and the numbers the ledger serves (number → its result's task). */
export interface PlannedRun {
  plan: RunPlan;
  files: UploadChunk[];
  reused: IdentifierSet;
  /** The tasks whose results are reused, each with when it was checked (tasks in flight are added once they are). */
  reusedTasks: Map<number, string>;
  /** The numbers that wait for a later run (plan.waiting of them): an output marks them `waiting`, not `no_result`. */
  waiting: IdentifierSet;
}

/**
 * Plans a run: every list (one per country under --country auto) split into the
 * numbers the ledger serves fresh and those to upload, the latter in balanced parts of
 * at most `maxTaskSize`. The same input and ledger state always give the same parts,
 * which is how a continued run checks that nothing moved (see samePlan).
 */
export async function planRun(input: PlanInput): Promise<PlannedRun> {
  const { limits, priceMicros, reuse } = input;
  const answers: LatestAnswers | undefined = reuse
    ? await latestAnswers(reuse.store, reuse.scope, reuse.product, reuse.rule, reuse.liveClaims)
    : undefined;
  const reused = new IdentifierSet();
  const reusedTaskRefs = new Set<number>();
  const inFlightRefs = new Set<number>();
  const waiting = new IdentifierSet();
  const files: UploadChunk[] = [];
  const totals = { kept: 0, reused: 0, padded: 0, noResult: 0, retriedNoResult: 0, inFlight: 0, waiting: 0, waitingForInFlight: 0 };
  const reusedFrom = new DateRange();
  const paddedFrom = new DateRange();
  const staleDates = new DateRange();
  let staleNumbers = 0;
  for (const [index, list] of input.lists.entries()) {
    const split = await splitByFreshness({
      list,
      answers,
      freshSince: reuse?.rule.freshSince,
      minTaskSize: limits.minTaskSize,
      maxTaskSize: limits.maxTaskSize,
      pad: reuse?.rule.pad ?? "oldest",
      retryNoResult: reuse?.rule.retryNoResult ?? false,
      target: { dir: input.dir, base: `part-${index + 1}${list.country ? `-${list.country}` : ""}` },
      reusedNumbers: reused,
      reusedTasks: reusedTaskRefs,
      inFlightTasks: inFlightRefs,
      waitingNumbers: waiting,
    });
    for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += split[key];
    for (const date of Object.values(split.reusedFrom ?? {})) reusedFrom.add(date);
    for (const date of Object.values(split.paddedFrom ?? {})) paddedFrom.add(date);
    staleNumbers += split.stale.numbers;
    for (const date of [split.stale.oldest, split.stale.newest]) if (date) staleDates.add(date);
    for (const part of split.parts) files.push(list.country === undefined ? part : { ...part, country: list.country });
  }
  const parts = files.map((file, index) => ({
    index,
    count: file.count,
    bytes: file.bytes,
    sha256: file.sha256,
    ...(file.country === undefined ? {} : { country: file.country }),
  }));
  const uploaded = uploadedNumbers({ parts });
  const byCountry = countryPlans(files, priceMicros);
  const inFlightTasks = [...inFlightRefs]
    .sort((a, b) => a - b)
    .map((ref) => {
      const task = answers!.tasks.get(ref)!;
      return {
        ref,
        ...(task.taskId === undefined ? {} : { taskId: task.taskId }),
        ...(task.runId === undefined ? {} : { runId: task.runId }),
      };
    });
  const plan: RunPlan = {
    version: 1,
    list: listFingerprint(input.lists),
    kept: totals.kept,
    // A run planned now journals the tasks it counted in flight, so it is carried on as planned.
    ...(reuse ? { reuse: journalledRule(reuse.rule, inFlightTasks) } : {}),
    reused: totals.reused,
    padded: totals.padded,
    ...(totals.padded > 0 ? { paddedMicros: reservationMicros(totals.padded, priceMicros) } : {}),
    ...(paddedFrom.count > 0 ? { paddedFrom: paddedFrom.range() as { oldest: string; newest: string } } : {}),
    ...(totals.noResult > 0 ? { noResult: totals.noResult } : {}),
    ...(totals.retriedNoResult > 0 ? { retriedNoResult: totals.retriedNoResult } : {}),
    ...(totals.inFlight > 0 ? { inFlight: { numbers: totals.inFlight, tasks: inFlightTasks } } : {}),
    ...(totals.waiting > 0 ? { waiting: totals.waiting } : {}),
    ...(totals.waitingForInFlight > 0 ? { waitingForInFlight: totals.waitingForInFlight } : {}),
    ...(reusedFrom.count > 0 ? { reusedFrom: reusedFrom.range() as { oldest: string; newest: string } } : {}),
    ...(staleNumbers > 0 ? { stale: { numbers: staleNumbers, ...staleDates.range() } } : {}),
    parts,
    limits,
    priceMicros,
    reservationMicros: reservationMicros(uploaded, priceMicros),
    savedMicros: reservationMicros(totals.reused + totals.noResult + totals.inFlight, priceMicros),
    ...(byCountry ? { byCountry } : {}),
  };
  const reusedTasks = new Map([...reusedTaskRefs].map((ref) => [ref, answers!.tasks.get(ref)!.date]));
  return { plan, files, reused, reusedTasks, waiting };
}

/** The rule as the plan keeps it: a run planned now, with the tasks it counted in flight. */
function journalledRule(rule: ReuseRule | NewReuseRule, inFlight: ReadonlyArray<{ ref: number }>): ReuseRule {
  return rule.inFlight === "now" ? { ...rule, inFlight: inFlight.map((task) => task.ref) } : rule;
}

/** The numbers the plan uploads: its parts', padding included. */
export function uploadedNumbers(plan: Pick<RunPlan, "parts">): number {
  return plan.parts.reduce((sum, part) => sum + part.count, 0);
}

/** What padding the plan's tasks to the minimum size reserves (a plan journalled before its cost was kept: at today's price). */
export function paddingMicros(plan: RunPlan): number {
  return plan.paddedMicros ?? plan.padded * plan.priceMicros;
}

/**
 * Whether planning again gave the journalled plan's parts: same count, and each part the
 * same bytes. Anything else means the list (or the ledger's results it relied on) moved,
 * and the run cannot be continued as planned.
 */
export function samePlan(journalled: RunPlan, again: RunPlan): boolean {
  return (
    journalled.parts.length === again.parts.length &&
    journalled.parts.every((part, i) => part.sha256 === again.parts[i]!.sha256 && part.country === again.parts[i]!.country)
  );
}

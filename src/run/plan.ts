import type { Limits } from "../config/resolve.js";
import { DateRange, latestResults, splitByFreshness, type LatestResults } from "../ledger/reuse.js";
import { IdentifierSet } from "../prepare/identifier-set.js";
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

/** How a run reuses the ledger: results checked at or after `freshSince`, as the ledger stood at `asOfTaskRef`. */
export interface ReuseRule {
  maxAgeMs: number;
  freshSince: string;
  asOfTaskRef: number;
}

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
  reusedFrom?: { oldest: string; newest: string };
  /** Numbers uploaded although the ledger has an older result for them (older than --max-age). */
  stale?: { numbers: number; oldest?: string; newest?: string };
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
  /** The ledger to reuse from, with the rule; without, every kept number is uploaded. */
  reuse?: { store: Store; scope: Scope; product: string; rule: ReuseRule };
}

/** A plan and what it needs to carry out: the parts' files, and the numbers the ledger serves (number → its result's task). */
export interface PlannedRun {
  plan: RunPlan;
  files: UploadChunk[];
  reused: IdentifierSet;
  /** The tasks whose results are reused, each with when it was checked. */
  reusedTasks: Map<number, string>;
}

/**
 * Plans a run: every list (one per country under --country auto) split into the
 * numbers the ledger serves fresh and those to upload, the latter in balanced parts of
 * at most `maxTaskSize`. The same input and ledger state always give the same parts,
 * which is how a continued run checks that nothing moved (see samePlan).
 */
export async function planRun(input: PlanInput): Promise<PlannedRun> {
  const { limits, priceMicros, reuse } = input;
  const latest: LatestResults | undefined = reuse
    ? await latestResults(reuse.store, reuse.scope, reuse.product, reuse.rule.asOfTaskRef)
    : undefined;
  const reused = new IdentifierSet();
  const reusedTaskRefs = new Set<number>();
  const files: UploadChunk[] = [];
  const totals = { kept: 0, reused: 0, padded: 0 };
  const reusedFrom = new DateRange();
  const staleDates = new DateRange();
  let staleNumbers = 0;
  for (const [index, list] of input.lists.entries()) {
    const split = await splitByFreshness({
      list,
      latest,
      freshSince: reuse?.rule.freshSince,
      minTaskSize: limits.minTaskSize,
      maxTaskSize: limits.maxTaskSize,
      target: { dir: input.dir, base: `part-${index + 1}${list.country ? `-${list.country}` : ""}` },
      reusedNumbers: reused,
      reusedTasks: reusedTaskRefs,
    });
    totals.kept += split.kept;
    totals.reused += split.reused;
    totals.padded += split.padded;
    for (const date of Object.values(split.reusedFrom ?? {})) reusedFrom.add(date);
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
  const uploaded = parts.reduce((sum, part) => sum + part.count, 0);
  const byCountry = countryPlans(files, priceMicros);
  const plan: RunPlan = {
    version: 1,
    list: listFingerprint(input.lists),
    kept: totals.kept,
    ...(reuse ? { reuse: reuse.rule } : {}),
    reused: totals.reused,
    padded: totals.padded,
    ...(reusedFrom.count > 0 ? { reusedFrom: reusedFrom.range() as { oldest: string; newest: string } } : {}),
    ...(staleNumbers > 0 ? { stale: { numbers: staleNumbers, ...staleDates.range() } } : {}),
    parts,
    limits,
    priceMicros,
    reservationMicros: reservationMicros(uploaded, priceMicros),
    savedMicros: reservationMicros(totals.reused, priceMicros),
    ...(byCountry ? { byCountry } : {}),
  };
  const reusedTasks = new Map([...reusedTaskRefs].map((ref) => [ref, latest!.checkedAt.get(ref)!]));
  return { plan, files, reused, reusedTasks };
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

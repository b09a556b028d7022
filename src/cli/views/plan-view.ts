import { formatAge } from "../../config/duration.js";
import { count } from "../../format-count.js";
import type { PrepareResult } from "../../prepare/index.js";
import { ROW_COUNTS, type PrepareSummary } from "../../prepare/summary.js";
import { paddingMicros, uploadedNumbers, type InFlightTask, type RunPlan } from "../../run/plan.js";
import { MICROS_PER_USD } from "../../spec/products.js";
import { formatUsd } from "../../tasks/cost.js";
import { snakeCaseKeys } from "../json-keys.js";

/** What a plan is of: the product and the country asked for (undefined for carrier_batch without one, `auto` for one per country). */
export interface PlanSubject {
  product: string;
  country: string | undefined;
}

/** The plan as one line for people: numbers, tasks, product, countries and the reservation. */
export function describePlan(plan: RunPlan, subject: PlanSubject): string {
  const countries = plan.byCountry?.map((each) => each.country).join(", ") ?? (subject.country === "auto" ? undefined : subject.country);
  const country = countries ? ` for ${countries}` : "";
  if (plan.kept === 0) return "nothing to upload: the list keeps no number that can be checked";
  if (plan.parts.length === 0) {
    return plan.waiting
      ? `nothing to upload: ${count(plan.waiting)} numbers need a result, fewer than a task's minimum of ${count(plan.limits.minTaskSize)}, and --pad never lets them wait for a later run`
      : `nothing to upload: every one of the ${count(plan.kept)} numbers was checked within --max-age or is in a task still in flight`;
  }
  return `${count(uploadedNumbers(plan))} numbers in ${count(plan.parts.length)} task(s) of ${subject.product}${country}; reservation ${formatUsd(plan.reservationMicros)} at ${formatUsd(plan.priceMicros)} per number (only checked numbers are charged)`;
}

/**
 * What the ledger does for the plan, one line each: what is reused (from when, what it
 * saves), what is checked again to fill a task, and what recent results --max-age left
 * out and what reusing them would save.
 */
export function reuseLines(plan: RunPlan): string[] {
  const lines: string[] = [];
  const maxAge = plan.reuse ? formatAge(Math.round(plan.reuse.maxAgeMs / 1000)) : undefined;
  const within = plan.reuse?.maxAgeMs === 0 ? "checked since this command began" : `younger than --max-age ${maxAge}`;
  if (plan.reused > 0) {
    const from = plan.reusedFrom ? ` checked ${span(plan.reusedFrom.oldest, plan.reusedFrom.newest)}` : "";
    lines.push(`Reused from the ledger: ${count(plan.reused)} numbers with results${from} (${within}).`);
  }
  if (plan.noResult) {
    lines.push(
      `Not uploaded again: ${count(plan.noResult)} numbers the service checked without a result (${within}); --retry-no-result uploads them.`,
    );
  }
  if (plan.inFlight) {
    lines.push(
      `In flight: ${count(plan.inFlight.numbers)} numbers are in task(s) submitted by another run and still processing (${inFlightNames(plan.inFlight.tasks)}): their results are taken from there, nothing is uploaded for them.`,
    );
  }
  if (plan.retriedNoResult) lines.push(`Retried on request (--retry-no-result): ${count(plan.retriedNoResult)} numbers without a result.`);
  if (plan.padded > 0) {
    const from = plan.paddedFrom ? `, checked ${span(plan.paddedFrom.oldest, plan.paddedFrom.newest)},` : "";
    lines.push(
      `Padding: ${count(uploadedNumbers(plan) - plan.padded)} numbers need checking; the minimum task is ${count(plan.limits.minTaskSize)}, so ${count(plan.padded)} of the oldest results${from} are renewed: ${formatUsd(paddingMicros(plan))} (--pad never lets them wait for a later run instead).`,
    );
  }
  if (plan.waitingForInFlight) {
    lines.push(
      `Waiting: ${count(plan.waitingForInFlight)} numbers need a result but are fewer than a task's minimum of ${count(plan.limits.minTaskSize)} until the tasks in flight finish; with --wait the run waits for them and plans again, their results filling the task; without, run the command again once they have finished.`,
    );
  } else if (plan.waiting) {
    lines.push(
      `Waiting: ${count(plan.waiting)} numbers need a result but are fewer than a task's minimum of ${count(plan.limits.minTaskSize)}; with --pad never they wait for a later run.`,
    );
  }
  if (plan.savedMicros > 0) {
    const numbers = plan.reused + (plan.noResult ?? 0) + (plan.inFlight?.numbers ?? 0);
    lines.push(`Not paid for again: ${count(numbers)} numbers, saving ${formatUsd(plan.savedMicros)}.`);
  }
  const stale = plan.stale;
  if (stale && stale.numbers > 0 && stale.oldest) {
    const rule = maxAge === undefined ? "reuse is off" : `older than --max-age ${maxAge}`;
    const longer = stale.longerMaxAge ? `; ${longerMaxAgeText(plan, stale.longerMaxAge)}` : "";
    lines.push(
      `Not reused: ${count(stale.numbers)} numbers have results checked ${span(stale.oldest, stale.newest ?? stale.oldest)}, ${rule}${longer}.`,
    );
  }
  return lines;
}

/**
 * What the run planned with a --max-age that reuses the old results would reserve, against
 * this plan: two whole plans (padding, no result and in flight included), not the old
 * results' numbers at the price, which padding can cancel out or a task's minimum outgrow.
 */
function longerMaxAgeText(plan: RunPlan, longer: LongerMaxAge): string {
  const flag = `--max-age ${formatAge(longer.maxAgeMs / 1000)}`;
  const reserved = formatUsd(plan.reservationMicros);
  const saved = plan.reservationMicros - longer.reservationMicros;
  return saved > 0
    ? `${flag} would reuse them and save ${formatUsd(saved)} (its plan reserves ${formatUsd(longer.reservationMicros)} instead of ${reserved})`
    : `${flag} would reuse them but save nothing (its plan reserves ${formatUsd(longer.reservationMicros)} too)`;
}

type LongerMaxAge = NonNullable<NonNullable<RunPlan["stale"]>["longerMaxAge"]>;

/** Two ISO times as people read them, to the minute: one, or "from … to …". */
function span(oldest: string, newest: string): string {
  const minute = (iso: string) => iso.replace("T", " ").slice(0, 16) + " UTC";
  return oldest.slice(0, 16) === newest.slice(0, 16) ? `at ${minute(oldest)}` : `from ${minute(oldest)} to ${minute(newest)}`;
}

/**
 * `--country auto`: each country's tasks and cost, then the countries left out because
 * they have fewer numbers than a task needs (their rows are `below_min_task`).
 */
export function countryPlanLines(plan: RunPlan, prepared: PrepareResult): string[] {
  if (plan.byCountry === undefined) return [];
  const lines = plan.byCountry.map(
    (each) =>
      `  ${each.country}: ${count(each.numbers)} numbers in ${count(each.tasks)} task(s), reservation ${formatUsd(each.reservationMicros)}`,
  );
  const groups = prepared.settings.countryGroups;
  for (const [country, numbers] of Object.entries(groups?.belowMin ?? {})) {
    lines.push(
      `  ${country}: ${count(numbers)} numbers, not submitted (below_min_task: the minimum task size is ${count(groups!.minTaskSize)})`,
    );
  }
  return lines;
}

/** The classes of rows preparation left out of the upload, as the summary names them. */
const NOT_SUBMITTED = [...ROW_COUNTS.filter((field) => field.endsWith("_cnt") || field === "blank"), "below_min_task"] as const;

/**
 * `submit --dry-run --json`: the plan as one object on stdout. The top level is the
 * whole submission (product, the country asked for, price, numbers uploaded, tasks,
 * reservation); `countries` each task country's share (country null for carrier_batch
 * without one); `reuse` what the ledger serves and saves; `not_submitted` the rows left
 * out and why (each class's count, and the countries below the minimum task size);
 * `preparation` the local summary, as `submit --json` gives it. Each part is its own
 * object, so more can be added beside them without changing what is there.
 */
export function planJson(plan: RunPlan, subject: PlanSubject, prepared: PrepareResult) {
  const { settings, summary } = prepared;
  const groups = settings.countryGroups;
  const numbers = uploadedNumbers(plan);
  const countries = plan.byCountry ?? [
    { country: subject.country ?? null, numbers, tasks: plan.parts.length, reservationMicros: plan.reservationMicros },
  ];
  return {
    dry_run: true,
    product: subject.product,
    country: settings.anyRegion ? "auto" : (subject.country ?? null),
    price_micros: plan.priceMicros,
    price_usd: plan.priceMicros / MICROS_PER_USD,
    kept: plan.kept,
    numbers,
    tasks: plan.parts.length,
    ...money("reservation", plan.reservationMicros),
    countries: countries.map(({ country, numbers: n, tasks, reservationMicros }) => ({
      country,
      numbers: n,
      tasks,
      ...money("reservation", reservationMicros),
    })),
    reuse: {
      max_age_seconds: plan.reuse ? Math.round(plan.reuse.maxAgeMs / 1000) : 0,
      reused: plan.reused,
      checked_again: plan.padded,
      padded: {
        numbers: plan.padded,
        from: plan.paddedFrom ?? null,
        ...money("cost", paddingMicros(plan)),
      },
      no_result: plan.noResult ?? 0,
      retried_no_result: plan.retriedNoResult ?? 0,
      in_flight: {
        numbers: plan.inFlight?.numbers ?? 0,
        tasks: plan.inFlight?.tasks.map((task) => ({ id: task.taskId ?? null, run: task.runId ?? null })) ?? [],
      },
      waiting: plan.waiting ?? 0,
      waiting_for_in_flight: plan.waitingForInFlight ?? 0,
      ...money("saved", plan.savedMicros),
      reused_from: plan.reusedFrom ?? null,
      not_reused: plan.stale?.oldest
        ? {
            numbers: plan.stale.numbers,
            oldest: plan.stale.oldest,
            newest: plan.stale.newest ?? plan.stale.oldest,
            ...(plan.stale.longerMaxAge ? longerMaxAgeJson(plan, plan.stale.longerMaxAge) : {}),
          }
        : null,
    },
    not_submitted: notSubmitted(summary, groups),
    preparation: snakeCaseKeys(summary),
  };
}

/** The plan with a --max-age that reuses the old results: the age, what it would reserve, and the difference (see longerMaxAgeText). */
function longerMaxAgeJson(plan: RunPlan, longer: LongerMaxAge) {
  return {
    max_age_to_reuse_seconds: longer.maxAgeMs / 1000,
    ...money("would_reserve", longer.reservationMicros),
    ...money("would_save", Math.max(0, plan.reservationMicros - longer.reservationMicros)),
  };
}

function money<K extends string>(name: K, micros: number) {
  return { [`${name}_micros`]: micros, [`${name}_usd`]: micros / MICROS_PER_USD } as Record<`${K}_micros` | `${K}_usd`, number>;
}

function notSubmitted(summary: PrepareSummary, groups: { minTaskSize: number; belowMin: Record<string, number> } | undefined) {
  const byClass = Object.fromEntries(NOT_SUBMITTED.map((field) => [field, summary[field] ?? 0]));
  return {
    rows: Object.values(byClass).reduce((sum, n) => sum + n, 0),
    by_class: byClass,
    below_min_task: groups
      ? {
          min_task_size: groups.minTaskSize,
          countries: Object.entries(groups.belowMin).map(([country, numbers]) => ({ country, numbers })),
        }
      : null,
  };
}

/** The tasks in flight as people read them: a task's id, or the run whose upload of a claim is under way. */
export function inFlightNames(tasks: readonly InFlightTask[]): string {
  return tasks.map((task) => task.taskId ?? `upload by run ${task.runId ?? "?"} under way`).join(", ");
}

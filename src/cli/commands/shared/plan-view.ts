import { count } from "../../../format-count.js";
import { ROW_COUNTS, type PrepareSummary } from "../../../prepare/summary.js";
import { MICROS_PER_USD } from "../../../spec/products.js";
import { formatUsd } from "../../../tasks/cost.js";
import type { PreparedSubmission, SubmitPlan } from "../../../tasks/submit-prepared.js";
import { snakeCaseKeys } from "../../json-keys.js";

/** The plan as one line for people: numbers, tasks, product, countries and the reservation. */
export function describePlan(plan: SubmitPlan): string {
  const countries = plan.byCountry?.map((each) => each.country).join(", ") ?? plan.country;
  const country = countries ? ` for ${countries}` : "";
  return `${count(plan.numbers)} numbers in ${count(plan.tasks)} task(s) of ${plan.product}${country}; reservation ${formatUsd(plan.reservationMicros)} at ${formatUsd(plan.priceMicros)} per number (only checked numbers are charged)`;
}

/**
 * `--country auto`: each country's tasks and cost, then the countries left out because
 * they have fewer numbers than a task needs (their rows are `below_min_task`).
 */
export function countryPlanLines(plan: SubmitPlan, prepared: PreparedSubmission): string[] {
  if (plan.byCountry === undefined) return [];
  const lines = plan.byCountry.map(
    (each) =>
      `  ${each.country}: ${count(each.numbers)} numbers in ${count(each.tasks)} task(s), reservation ${formatUsd(each.reservationMicros)}`,
  );
  const groups = prepared.entry.preparation?.countryGroups;
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
 * whole submission (product, the country asked for, price, numbers, tasks, reservation);
 * `countries` each task country's share (country null for carrier_batch without one);
 * `not_submitted` the rows left out and why (each class's count, and the countries below
 * the minimum task size); `preparation` the local summary, as `submit --json` gives it.
 * Each part is its own object, so more can be added beside them without changing what
 * is there.
 */
export function planJson(plan: SubmitPlan, prepared: PreparedSubmission) {
  const settings = prepared.entry.preparation;
  const summary = prepared.entry.prepared;
  const groups = settings?.countryGroups;
  // One list of tasks by country whatever was asked: carrier_batch without --country has one entry, its country null.
  const countries = plan.byCountry ?? [{ ...plan, country: plan.country ?? null }];
  return {
    dry_run: true,
    product: plan.product,
    country: settings?.anyRegion ? "auto" : (plan.country ?? null),
    price_micros: plan.priceMicros,
    price_usd: plan.priceMicros / MICROS_PER_USD,
    numbers: plan.numbers,
    tasks: plan.tasks,
    ...money(plan.reservationMicros),
    countries: countries.map(({ country, numbers, tasks, reservationMicros }) => ({
      country,
      numbers,
      tasks,
      ...money(reservationMicros),
    })),
    not_submitted: summary ? notSubmitted(summary, groups) : null,
    preparation: summary ? snakeCaseKeys(summary) : null,
  };
}

function money(reservationMicros: number) {
  return { reservation_micros: reservationMicros, reservation_usd: reservationMicros / MICROS_PER_USD };
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

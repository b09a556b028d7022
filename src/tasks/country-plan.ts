import { reservationMicros } from "./cost.js";
import type { Chunk } from "./submit.js";

/** One country's share of a `--country auto` submission. */
export interface CountryPlan {
  country: string;
  numbers: number;
  tasks: number;
  reservationMicros: number;
}

/** The parts of a list grouped by country (each with its own country), as one plan line per country in list order; undefined otherwise. */
export function countryPlans(chunks: readonly Chunk[], priceMicros: number): CountryPlan[] | undefined {
  if (!chunks.some((chunk) => chunk.country !== undefined)) return undefined;
  const plans = new Map<string, CountryPlan>();
  for (const chunk of chunks) {
    const country = chunk.country ?? "";
    const plan = plans.get(country) ?? { country, numbers: 0, tasks: 0, reservationMicros: 0 };
    plan.numbers += chunk.count;
    plan.tasks++;
    plans.set(country, plan);
  }
  for (const plan of plans.values()) plan.reservationMicros = reservationMicros(plan.numbers, priceMicros);
  return [...plans.values()];
}

import { isCarrierProduct, type ServiceType } from "../spec/products.js";
import { carrierColumns } from "./enrichment.js";
import { hashUnit } from "./random.js";

/**
 * Share of `true` per signal product, so the four signals do not look alike
 * (validation is mostly true, high-value mostly false). Which numbers are true is
 * fixed by (seed, product, identifier).
 */
const TRUE_SHARE: Readonly<Record<Exclude<ServiceType, "carrier_batch">, number>> = {
  number_validation_batch: 0.82,
  number_activity_batch: 0.64,
  number_high_value_batch: 0.18,
  number_ecommerce_batch: 0.37,
};

/** Whether a kept number gets no result (counted in failure_cnt, absent from the file). */
export function hasNoResult(seed: number, product: ServiceType, identifier: string, rate: number): boolean {
  return rate > 0 && hashUnit(seed, "no-result", product, identifier) < rate;
}

/** One result row in `resultColumns(product)` order. Pure: the same inputs give the same row. */
export function resultRow(seed: number, product: ServiceType, identifier: string): readonly string[] {
  if (isCarrierProduct(product)) return [identifier, ...carrierColumns(identifier)];
  const share = TRUE_SHARE[product as Exclude<ServiceType, "carrier_batch">];
  return [identifier, hashUnit(seed, "signal", product, identifier) < share ? "true" : "false"];
}

/** Carriers a drifted mobile number moves to (a port), in the order tried. */
const PORTED_TO = ["Vodafone", "EE", "O2", "Three", "giffgaff", "Lyca Mobile"];

/**
 * A number's result as it reads in the task of submission `ordinal`: its usual row, or,
 * for a `drift` share of numbers drawn per task (seeded), a changed one: a signal turned
 * the other way, or a mobile number's carrier moved elsewhere (as after a port).
 */
export function resultRowInTask(seed: number, product: ServiceType, identifier: string, ordinal: number, drift: number): readonly string[] {
  const row = resultRow(seed, product, identifier);
  if (drift === 0 || hashUnit(seed, "drift", product, identifier, String(ordinal)) >= drift) return row;
  if (!isCarrierProduct(product)) return [identifier, row[1] === "true" ? "false" : "true"];
  const [, carrier, , ...rest] = row;
  // Only a number with a carrier (a mobile range) can be ported.
  if (!carrier) return row;
  const start = Math.floor(hashUnit(seed, "port", identifier, String(ordinal)) * PORTED_TO.length);
  const ported = [...PORTED_TO.slice(start), ...PORTED_TO.slice(0, start)].find((name) => name !== carrier)!;
  return [identifier, ported, ported, ...rest];
}

/** The rows of a finished task, in the order the numbers first appeared in the file. */
export function* resultRows(
  seed: number,
  product: ServiceType,
  kept: readonly string[],
  noResultRate: number,
  task: { ordinal: number; drift: number } = { ordinal: 0, drift: 0 },
): Generator<readonly string[]> {
  for (const identifier of kept) {
    if (!hasNoResult(seed, product, identifier, noResultRate)) yield resultRowInTask(seed, product, identifier, task.ordinal, task.drift);
  }
}

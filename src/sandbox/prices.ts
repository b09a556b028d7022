import { canonicalServiceType, DEFAULT_PRICE_MICROS, SERVICE_TYPES, type ServiceType } from "../spec/products.js";

export type PriceTable = Readonly<Record<ServiceType, number>>;

function checkMicros(product: string, micros: number): void {
  if (!Number.isSafeInteger(micros) || micros < 0) {
    throw new Error(`price for ${product} must be a whole number of micros (0 or more), got ${String(micros)}`);
  }
}

/**
 * Parses per-product price overrides such as "carrier_batch=1500,number_activity_batch=2000"
 * (micro-USD per number; `global_carrier_batch` is accepted for `carrier_batch`).
 * Empty text means no overrides. Throws a plain Error naming the bad entry.
 */
export function parsePrices(text: string): Partial<Record<ServiceType, number>> {
  const prices: Partial<Record<ServiceType, number>> = {};
  for (const entry of text.split(",").map((part) => part.trim())) {
    if (entry === "") continue;
    const match = /^([a-z_]+)\s*=\s*(\d+)$/.exec(entry);
    if (!match) throw new Error(`bad price "${entry}": expected service_type=micros, e.g. carrier_batch=1500`);
    const product = canonicalServiceType(match[1]!);
    if (!product) {
      throw new Error(`bad price "${entry}": unknown service type; known: ${SERVICE_TYPES.join(", ")}`);
    }
    if (prices[product] !== undefined) throw new Error(`bad prices: ${product} is priced twice`);
    const micros = Number(match[2]);
    checkMicros(product, micros);
    prices[product] = micros;
  }
  return prices;
}

/** The spec's default prices with the overrides applied; throws on an unknown product or a bad amount. */
export function resolvePrices(overrides: Partial<Record<string, number>>): PriceTable {
  const table: Record<ServiceType, number> = { ...DEFAULT_PRICE_MICROS };
  for (const [name, micros] of Object.entries(overrides)) {
    if (micros === undefined) continue;
    const product = canonicalServiceType(name);
    if (!product) throw new Error(`unknown service type "${name}" in prices`);
    checkMicros(product, micros);
    table[product] = micros;
  }
  return table;
}

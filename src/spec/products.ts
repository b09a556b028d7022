/**
 * The service's product catalogue, as the specification states it. Shared by the
 * client (cost estimates, result columns) and the sandbox (pricing, result files).
 */

export const SERVICE_TYPES = [
  "number_validation_batch",
  "number_activity_batch",
  "number_high_value_batch",
  "number_ecommerce_batch",
  "carrier_batch",
] as const;

export type ServiceType = (typeof SERVICE_TYPES)[number];

/** One description of the spec names the carrier product `global_carrier_batch`. */
export const SERVICE_TYPE_ALIASES: Readonly<Record<string, ServiceType>> = {
  global_carrier_batch: "carrier_batch",
};

/** Returns the canonical product code, or undefined when the service would answer 40000. */
export function canonicalServiceType(value: string): ServiceType | undefined {
  if ((SERVICE_TYPES as readonly string[]).includes(value)) return value as ServiceType;
  return SERVICE_TYPE_ALIASES[value];
}

export const SIGNAL_COLUMNS = ["identifier", "activated"] as const;

/** Whether a result column is the spec's boolean: `activated`, or a chain's later product's (`activity_activated`). */
export function isBooleanColumn(column: string): boolean {
  return column === "activated" || column.endsWith("_activated");
}
export const CARRIER_COLUMNS = ["identifier", "carrier", "underlying_carrier", "number_type", "country_code", "region", "city"] as const;

/** Result file columns per product, in the spec's order. */
export function resultColumns(serviceType: ServiceType): readonly string[] {
  return serviceType === "carrier_batch" ? CARRIER_COLUMNS : SIGNAL_COLUMNS;
}

export function isCarrierProduct(serviceType: ServiceType): boolean {
  return serviceType === "carrier_batch";
}

/** Per-number prices in micro-USD from the spec's price list (1 USD = 1,000,000 micros). */
export const DEFAULT_PRICE_MICROS: Readonly<Record<ServiceType, number>> = {
  number_validation_batch: 1000,
  number_activity_batch: 3000,
  number_high_value_batch: 4000,
  number_ecommerce_batch: 3000,
  carrier_batch: 1000,
};

export const MICROS_PER_USD = 1_000_000;

/**
 * Limits quoted by the spec. The two descriptions disagree on task size
 * (500–500,000 vs 1,000–100,000); the first is the default and both ends are configurable.
 */
export const DEFAULT_LIMITS = {
  minTaskSize: 500,
  maxTaskSize: 500_000,
  maxFileBytes: 20 * 1024 * 1024,
  maxInFlight: 5,
  idempotencyKeyMaxLength: 128,
  pollFloorSeconds: 30,
} as const;

export const API_PREFIX = "/api/v1";

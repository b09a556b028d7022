import { count } from "../format-count.js";
import { MICROS_PER_USD } from "../spec/products.js";

/** The service reserves every uploaded line at the product's price. */
export function reservationMicros(numbers: number, priceMicros: number): number {
  return numbers * priceMicros;
}

export function usdToMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD);
}

/**
 * Money for people, the one way bulkcheck shows it: exact to the micro-dollar,
 * trimmed to at least cents, with thousands separators: $1,196.399, $10.00,
 * $0.003. Worked out on the integer micros, so no binary fraction shows through.
 */
export function formatUsd(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const whole = Math.floor(Math.abs(micros) / MICROS_PER_USD);
  const fraction = String(Math.abs(micros) % MICROS_PER_USD)
    .padStart(6, "0")
    .replace(/0+$/, "")
    .padEnd(2, "0");
  return `${sign}$${count(whole)}.${fraction}`;
}

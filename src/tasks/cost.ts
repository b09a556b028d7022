import { MICROS_PER_USD } from "../spec/products.js";

/** The service reserves every uploaded line at the product's price. */
export function reservationMicros(numbers: number, priceMicros: number): number {
  return numbers * priceMicros;
}

export function usdToMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD);
}

/** $1.234, $10.00, $0.003: at least cents, and as many places as the amount needs (micros). */
export function formatUsd(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const fixed = (Math.abs(micros) / MICROS_PER_USD).toFixed(6);
  const trimmed = fixed.replace(/0+$/, "");
  const [whole, fraction = ""] = trimmed.split(".");
  return `${sign}$${whole}.${fraction.padEnd(2, "0")}`;
}

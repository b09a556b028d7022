import { InvalidArgumentError } from "./commander.js";

export { InvalidArgumentError as InvalidFlag };

/** Flag parsers: commander reports their errors as usage errors (exit 2). */
export function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) throw new InvalidArgumentError(`expected a number of seconds, got "${value}"`);
  return seconds;
}

export function parseCount(value: string): number {
  const count = Number(value.replace(/_/g, ""));
  if (!Number.isSafeInteger(count) || count <= 0) throw new InvalidArgumentError(`expected a positive whole number, got "${value}"`);
  return count;
}

export function parseUsd(value: string): number {
  const usd = Number(value.replace(/^\$/, ""));
  if (!Number.isFinite(usd) || usd < 0) throw new InvalidArgumentError(`expected an amount in USD such as 25 or 2.50, got "${value}"`);
  return usd;
}

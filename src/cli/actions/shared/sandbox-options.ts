import { UsageError } from "../../../errors.js";
import { FAULT_KINDS, isFaultKind, type FaultKind } from "../../../sandbox/faults.js";
import type { SandboxOptions } from "../../../sandbox/index.js";
import { parsePrices } from "../../../sandbox/prices.js";

// Apart from the sandbox command so that building the command tree does not load
// the sandbox's fault list, whose random source loads node:crypto (~2 ms a start).

export interface SandboxFlags {
  host: string;
  port: number;
  apiKey?: string;
  balanceMicros?: number;
  minTaskSize?: number;
  maxTaskSize?: number;
  maxFileBytes?: number;
  maxInFlight?: number;
  maxUnfinished?: number;
  numbersPerSecond?: number;
  resultFormat?: "csv" | "zip";
  urlTtl?: number;
  resultDelay?: number;
  failRate?: number;
  resultMissRate?: number;
  drift?: number;
  chaos?: number;
  chaosFaults?: string;
  retryAfter?: number;
  seed?: number;
  prices?: string;
  separateResultOrigin?: boolean;
  /** --log FILE: where request lines go (the command's concern, not the emulator's). */
  log?: string;
}

/**
 * `bulkcheck sandbox` flags as startSandbox options. A flag not given stays
 * undefined, and the sandbox fills in its default for it.
 */
export function sandboxOptionsFromFlags(flags: SandboxFlags): Partial<SandboxOptions> {
  return {
    host: flags.host,
    port: flags.port,
    apiKey: flags.apiKey,
    balanceMicros: flags.balanceMicros,
    minTaskSize: flags.minTaskSize,
    maxTaskSize: flags.maxTaskSize,
    maxFileBytes: flags.maxFileBytes,
    maxInFlight: flags.maxInFlight,
    maxUnfinished: flags.maxUnfinished,
    numbersPerSecond: flags.numbersPerSecond,
    resultFormat: flags.resultFormat,
    urlTtlSeconds: flags.urlTtl,
    resultDelaySeconds: flags.resultDelay,
    failRate: flags.failRate,
    noResultRate: flags.resultMissRate,
    drift: flags.drift,
    chaos: flags.chaos,
    chaosFaults: flags.chaosFaults === undefined ? undefined : chaosFaultsFromFlag(flags.chaosFaults),
    retryAfterSeconds: flags.retryAfter,
    seed: flags.seed,
    separateResultOrigin: flags.separateResultOrigin,
    prices: flags.prices === undefined ? undefined : pricesFromFlag(flags.prices),
  };
}

function chaosFaultsFromFlag(list: string): FaultKind[] {
  const kinds = list
    .split(",")
    .map((kind) => kind.trim())
    .filter(Boolean);
  const unknown = kinds.filter((kind) => !isFaultKind(kind));
  if (unknown.length > 0)
    throw new UsageError(`--chaos-faults: unknown fault ${unknown.join(", ")}.`, { hint: `Faults: ${FAULT_KINDS.join(", ")}` });
  return kinds as FaultKind[];
}

function pricesFromFlag(list: string): SandboxOptions["prices"] {
  try {
    return parsePrices(list);
  } catch (error) {
    throw new UsageError(`--prices: ${(error as Error).message}`);
  }
}

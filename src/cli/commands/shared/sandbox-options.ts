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
  chaos?: number;
  chaosFaults?: string;
  retryAfter?: number;
  seed?: number;
  prices?: string;
  separateResultOrigin?: boolean;
  /** --log FILE: where request lines go (the command's concern, not the emulator's). */
  log?: string;
}

/** `bulkcheck sandbox` flags as startSandbox options; unset flags keep the sandbox's defaults. */
export function sandboxOptionsFromFlags(flags: SandboxFlags): Partial<SandboxOptions> {
  const options: Partial<SandboxOptions> = { host: flags.host, port: flags.port };
  const set = <K extends keyof SandboxOptions>(key: K, value: SandboxOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set("apiKey", flags.apiKey);
  set("balanceMicros", flags.balanceMicros);
  set("minTaskSize", flags.minTaskSize);
  set("maxTaskSize", flags.maxTaskSize);
  set("maxFileBytes", flags.maxFileBytes);
  set("maxInFlight", flags.maxInFlight);
  set("maxUnfinished", flags.maxUnfinished);
  set("numbersPerSecond", flags.numbersPerSecond);
  set("resultFormat", flags.resultFormat);
  set("urlTtlSeconds", flags.urlTtl);
  set("resultDelaySeconds", flags.resultDelay);
  set("failRate", flags.failRate);
  set("noResultRate", flags.resultMissRate);
  set("chaos", flags.chaos);
  set("retryAfterSeconds", flags.retryAfter);
  if (flags.chaosFaults !== undefined) {
    const kinds = flags.chaosFaults
      .split(",")
      .map((kind) => kind.trim())
      .filter(Boolean);
    const unknown = kinds.filter((kind) => !isFaultKind(kind));
    if (unknown.length > 0)
      throw new UsageError(`--chaos-faults: unknown fault ${unknown.join(", ")}.`, { hint: `Faults: ${FAULT_KINDS.join(", ")}` });
    options.chaosFaults = kinds as FaultKind[];
  }
  set("seed", flags.seed);
  set("separateResultOrigin", flags.separateResultOrigin);
  if (flags.prices !== undefined) {
    try {
      options.prices = parsePrices(flags.prices);
    } catch (error) {
      throw new UsageError(`--prices: ${(error as Error).message}`);
    }
  }
  return options;
}

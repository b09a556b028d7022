import { UsageError } from "../../errors.js";
import { FAULT_KINDS, parsePrices, startSandbox, type FaultKind, type SandboxOptions } from "../../sandbox/index.js";
import { isFaultKind } from "../../sandbox/faults.js";
import type { Context } from "../context.js";

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
}

/** Serves the emulator until Ctrl-C; the base URL and key go to stderr, or to stdout as JSON. */
export async function sandboxCommand(ctx: Context, flags: SandboxFlags): Promise<void> {
  const sandbox = await startSandbox({ ...sandboxOptionsFromFlags(flags), log: (line) => ctx.printer.note(line) });
  if (ctx.globals.json) {
    ctx.printer.json({ base_url: sandbox.url, api_key: sandbox.apiKey });
  } else {
    ctx.printer.note(`bulkcheck sandbox listening on ${sandbox.url}`);
    ctx.printer.note(`API key: ${sandbox.apiKey}`);
    ctx.printer.note(`Try it: export BULKCHECK_BASE_URL=${sandbox.url} BULKCHECK_API_KEY=${sandbox.apiKey}; bulkcheck balance`);
    ctx.printer.note("Stop with Ctrl-C.");
  }
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    ctx.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await sandbox.close();
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
    const kinds = flags.chaosFaults.split(",").map((kind) => kind.trim()).filter(Boolean);
    const unknown = kinds.filter((kind) => !isFaultKind(kind));
    if (unknown.length > 0) throw new UsageError(`--chaos-faults: unknown fault ${unknown.join(", ")}.`, { hint: `Faults: ${FAULT_KINDS.join(", ")}` });
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

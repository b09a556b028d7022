import { UsageError } from "../errors.js";
import { DEFAULT_LIMITS, type ServiceType } from "../spec/products.js";
import { CHAOS_FAULT_KINDS, FAULT_KINDS, isFaultKind, type FaultKind } from "./faults.js";
import { resolvePrices } from "./prices.js";
import { randomHex } from "./random.js";
import type { WebhookVerifier } from "./webhooks.js";

export interface SandboxOptions {
  /** Interface to listen on, e.g. "127.0.0.1". */
  host: string;
  /** 0 picks any free port. */
  port: number;
  /** The one valid X-API-Key; generated ("sk_sandbox_" + 24 hex) when absent. */
  apiKey: string;
  /** Opening balance in micro-USD. */
  balanceMicros: number;
  /** Fewest non-blank lines a file may have (42200 below). */
  minTaskSize: number;
  /** Most non-blank lines a file may have (42200 above). */
  maxTaskSize: number;
  /** Largest accepted file in bytes (42200 above). */
  maxFileBytes: number;
  /** Submit requests in flight at once per key; the next gets 42901. */
  maxInFlight: number;
  /** Unfinished tasks per key; the next submit gets 42900 (the quota behind that code). */
  maxUnfinished: number;
  /** An upload silent this long loses its request slot (its connection is closed). */
  uploadIdleSeconds: number;
  /** Processing speed once a task is prepared. */
  numbersPerSecond: number;
  resultFormat: "csv" | "zip";
  /** How long a result_url stays valid. */
  urlTtlSeconds: number;
  /** result_url is absent this long after a task succeeds. */
  resultDelaySeconds: number;
  /** Share (0..1) of tasks that end `failed`; which ones is fixed by `seed` and submission order. */
  failRate: number;
  /** Share (0..1) of kept numbers without a result (failure_cnt); which ones is fixed by `seed`. */
  noResultRate: number;
  /**
   * Share (0..1) of numbers whose result, in each task, differs from the number's usual one
   * (a signal turned the other way, a carrier changed): which ones is fixed by `seed` and the
   * task's submission order, so results "drift" between two checks of the same list.
   */
  drift: number;
  /** Share (0..1) of requests answered with a fault drawn from `chaosFaults`. */
  chaos: number;
  chaosFaults: FaultKind[];
  /** Retry-After (seconds) sent with 42901 and 50303. */
  retryAfterSeconds: number;
  /** Makes chaos, failures and result values reproducible (used as a 32-bit integer). */
  seed: number;
  /** Per-product price overrides in micros. */
  prices: Partial<Record<ServiceType, number>>;
  /** Serve result files from a second listener (another origin), like a CDN. */
  separateResultOrigin: boolean;
  /** Receives one line per request; never the API key or a query string. */
  log: (line: string) => void;
  /** Clock in ms; drives task progress, URL expiry and timestamps. */
  now: () => number;
  /** Tells whether a delivery to the webhook receiver is signed with the secret it knows (see webhooks.ts). */
  verifyWebhook: WebhookVerifier;
}

export const SANDBOX_DEFAULTS: Omit<SandboxOptions, "apiKey" | "log" | "now" | "verifyWebhook"> = {
  host: "127.0.0.1",
  port: 0,
  balanceMicros: 10_000_000,
  minTaskSize: DEFAULT_LIMITS.minTaskSize,
  maxTaskSize: DEFAULT_LIMITS.maxTaskSize,
  maxFileBytes: DEFAULT_LIMITS.maxFileBytes,
  maxInFlight: DEFAULT_LIMITS.maxInFlight,
  maxUnfinished: 50,
  uploadIdleSeconds: 30,
  numbersPerSecond: 2_000,
  resultFormat: "csv",
  urlTtlSeconds: 300,
  resultDelaySeconds: 0,
  failRate: 0,
  noResultRate: 0.02,
  drift: 0,
  chaos: 0,
  chaosFaults: [...CHAOS_FAULT_KINDS],
  retryAfterSeconds: 1,
  seed: 1,
  prices: {},
  separateResultOrigin: false,
};

/** A bad option is the caller's to fix (for `bulkcheck sandbox`, a flag): a UsageError, exit 2. */
function fail(name: string, rule: string, value: unknown): never {
  throw new UsageError(`invalid sandbox option ${name}: ${rule} (got ${JSON.stringify(value)})`, {
    hint: "See bulkcheck sandbox --help for the options and their ranges.",
  });
}

function checkInteger(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) fail(name, `must be a whole number from ${min} to ${max}`, value);
}

function checkShare(name: string, value: number): void {
  if (!(typeof value === "number" && value >= 0 && value <= 1)) fail(name, "must be a number from 0 to 1", value);
}

function checkPositive(name: string, value: number): void {
  if (!(typeof value === "number" && Number.isFinite(value) && value > 0)) fail(name, "must be a positive number", value);
}

/** Defaults filled in, API key generated if absent, every value checked; throws a UsageError on a bad option. */
export function resolveOptions(partial: Partial<SandboxOptions>): SandboxOptions {
  const given = Object.fromEntries(Object.entries(partial).filter(([, value]) => value !== undefined));
  const o: SandboxOptions = {
    ...SANDBOX_DEFAULTS,
    apiKey: `sk_sandbox_${randomHex(12)}`,
    log: () => undefined,
    now: Date.now,
    verifyWebhook: () => null,
    ...given,
  };
  if (typeof o.apiKey !== "string" || !/^[\x21-\x7e]{1,256}$/.test(o.apiKey))
    fail("apiKey", "must be 1-256 visible ASCII characters", "<hidden>");
  checkInteger("port", o.port, 0, 65_535);
  checkInteger("balanceMicros", o.balanceMicros, 0);
  checkInteger("minTaskSize", o.minTaskSize, 1);
  checkInteger("maxTaskSize", o.maxTaskSize, o.minTaskSize);
  checkInteger("maxFileBytes", o.maxFileBytes, 1);
  checkInteger("maxInFlight", o.maxInFlight, 1);
  checkInteger("maxUnfinished", o.maxUnfinished, 1);
  checkPositive("numbersPerSecond", o.numbersPerSecond);
  checkPositive("uploadIdleSeconds", o.uploadIdleSeconds);
  checkPositive("urlTtlSeconds", o.urlTtlSeconds);
  checkInteger("resultDelaySeconds", o.resultDelaySeconds, 0);
  checkInteger("retryAfterSeconds", o.retryAfterSeconds, 0);
  checkInteger("seed", o.seed, -(2 ** 31), 2 ** 32 - 1);
  for (const name of ["failRate", "noResultRate", "drift", "chaos"] as const) checkShare(name, o[name]);
  if (o.resultFormat !== "csv" && o.resultFormat !== "zip") fail("resultFormat", "must be csv or zip", o.resultFormat);
  if (!Array.isArray(o.chaosFaults) || !o.chaosFaults.every(isFaultKind)) {
    fail("chaosFaults", `must list fault kinds from ${FAULT_KINDS.join(", ")}`, o.chaosFaults);
  }
  if (typeof o.log !== "function" || typeof o.now !== "function" || typeof o.verifyWebhook !== "function") {
    fail("log/now/verifyWebhook", "must be functions", typeof o.log);
  }
  resolvePrices(o.prices);
  return o;
}

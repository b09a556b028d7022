import { AuthError, UsageError } from "../errors.js";
import type { Env } from "./paths.js";
import { DEFAULT_LIMITS, DEFAULT_PRICE_MICROS, SERVICE_TYPES, type ServiceType } from "../spec/products.js";
import { DEFAULT_MAX_AGE_SECONDS, settingSpec, type ProfileSettings } from "./settings.js";

/** The profile used when neither --profile nor BULKCHECK_PROFILE names one. */
export const DEFAULT_PROFILE = "default";

export type Source = "flag" | "environment" | "profile" | "default";

export interface Resolved<T> {
  value: T;
  source: Source;
}

export interface Limits {
  minTaskSize: number;
  maxTaskSize: number;
  maxFileBytes: number;
  maxInFlight: number;
}

export interface ResolveInput {
  env: Env;
  profileName: string;
  profile: ProfileSettings;
  baseUrlFlag?: string;
}

/**
 * API key: environment (BULKCHECK_API_KEY), then the profile. There is no flag, so a key
 * never lands in `ps` or shell history. A variable that is set wins even when blank (an
 * authentication error): a script that exported an empty key must not spend the
 * profile's account instead.
 */
export function resolveApiKey(input: ResolveInput): Resolved<string> {
  const fromEnv = input.env.BULKCHECK_API_KEY;
  if (fromEnv !== undefined) {
    if (fromEnv.trim() === "") {
      throw new AuthError("BULKCHECK_API_KEY is set but blank.", {
        hint: "Export the key itself (export BULKCHECK_API_KEY=...), or unset BULKCHECK_API_KEY to use the profile's key.",
      });
    }
    return { value: fromEnv.trim(), source: "environment" };
  }
  const stored = input.profile["api-key"];
  if (typeof stored === "string" && stored) return { value: stored, source: "profile" };
  throw new AuthError(`No API key is set for profile "${input.profileName}".`, {
    hint: 'Set it with: bulkcheck config set api-key   (prompts, or reads stdin: echo "$KEY" | bulkcheck config set api-key -)\nor export BULKCHECK_API_KEY for this shell.',
  });
}

/**
 * What to do about a key the service refused (40100), by where it came from: while
 * BULKCHECK_API_KEY is set it wins, so setting the profile's key cannot help.
 */
export function refusedKeyHint(source: Source, profileName: string): string {
  if (source === "environment") {
    return "The key came from BULKCHECK_API_KEY, which wins over the profile's: export the right key there, or unset BULKCHECK_API_KEY to use the key of the profile.";
  }
  return `Set the right key for profile "${profileName}" with: bulkcheck config set api-key   (prompts, or reads stdin with -)`;
}

/** Base URL: --base-url, then BULKCHECK_BASE_URL, then the profile. */
export function resolveBaseUrl(input: ResolveInput): Resolved<string> {
  const spec = settingSpec("base-url");
  if (input.baseUrlFlag) return { value: String(spec.parse(input.baseUrlFlag)), source: "flag" };
  if (input.env.BULKCHECK_BASE_URL) return { value: String(spec.parse(input.env.BULKCHECK_BASE_URL)), source: "environment" };
  const stored = input.profile["base-url"];
  if (typeof stored === "string" && stored) return { value: stored, source: "profile" };
  throw new UsageError(`No service base URL is set for profile "${input.profileName}".`, {
    hint: "Set it with: bulkcheck config set base-url https://...   (or pass --base-url, or export BULKCHECK_BASE_URL)\nTo try bulkcheck for free, run a local service: bulkcheck sandbox",
  });
}

const LOOPBACK = new Set(["localhost", "[::1]"]);

/** Whether the base URL names this machine: localhost, ::1, or anywhere in 127.0.0.0/8. */
export function isLoopback(baseUrl: string): boolean {
  const { hostname } = new URL(baseUrl);
  return LOOPBACK.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

export function resolveLimits(profile: ProfileSettings): Limits {
  const pick = (key: keyof ProfileSettings, fallback: number) => {
    const value = profile[key];
    return typeof value === "number" ? value : fallback;
  };
  return {
    minTaskSize: pick("min-task-size", DEFAULT_LIMITS.minTaskSize),
    maxTaskSize: pick("max-task-size", DEFAULT_LIMITS.maxTaskSize),
    maxFileBytes: pick("max-file-bytes", DEFAULT_LIMITS.maxFileBytes),
    maxInFlight: pick("max-in-flight", DEFAULT_LIMITS.maxInFlight),
  };
}

export function resolvePrices(profile: ProfileSettings): Record<ServiceType, number> {
  const prices = { ...DEFAULT_PRICE_MICROS };
  for (const product of SERVICE_TYPES) {
    const value = profile[`price.${product}`];
    if (typeof value === "number") prices[product] = value;
  }
  return prices;
}

/** What the ledger keeps and how runs use it: from the profile, before any flag. */
export interface LedgerSettings {
  /** Keep every downloaded result (config set ledger on|off; --no-ledger for one command). */
  on: boolean;
  /** Reuse results younger than this (config set max-age; --max-age for one run). */
  maxAgeSeconds: number;
  /** Remove results older than this after each run; undefined keeps them. */
  retentionSeconds: number | undefined;
  /** Numbers that need a result but are too few for a task: fill it with the oldest fresh results, or let them wait (config set pad; --pad). */
  pad: "oldest" | "never";
}

/** The shared store's URL: BULKCHECK_STORE_URL, then the profile's `store`; none means the local SQLite file. */
export function resolveStoreUrl(env: Env, profile: ProfileSettings): string | undefined {
  const fromEnv = env.BULKCHECK_STORE_URL?.trim();
  if (fromEnv) return String(settingSpec("store").parse(fromEnv));
  return typeof profile.store === "string" ? profile.store : undefined;
}

/**
 * The secret that signs notifications: BULKCHECK_WEBHOOK_SECRET, then the profile's
 * webhook-secret; undefined when neither has one. Like the API key, a variable that is set
 * wins even when blank (an error), and there is no flag.
 */
export function resolveWebhookSecret(env: Env, profile: ProfileSettings): Resolved<string> | undefined {
  const fromEnv = env.BULKCHECK_WEBHOOK_SECRET;
  if (fromEnv !== undefined) {
    if (fromEnv.trim() === "") {
      throw new UsageError("BULKCHECK_WEBHOOK_SECRET is set but blank.", {
        hint: "Export the secret itself, or unset BULKCHECK_WEBHOOK_SECRET to use the profile's webhook-secret.",
      });
    }
    return { value: String(settingSpec("webhook-secret").parse(fromEnv)), source: "environment" };
  }
  const stored = profile["webhook-secret"];
  return typeof stored === "string" && stored ? { value: stored, source: "profile" } : undefined;
}

export function resolveLedger(profile: ProfileSettings): LedgerSettings {
  const maxAge = profile["max-age"];
  const retention = profile["ledger-retention"];
  return {
    on: profile.ledger !== "off",
    maxAgeSeconds: typeof maxAge === "number" ? maxAge : DEFAULT_MAX_AGE_SECONDS,
    retentionSeconds: typeof retention === "number" ? retention : undefined,
    pad: profile.pad === "never" ? "never" : "oldest",
  };
}

import type { ServiceType } from "../spec/products.js";
import { createKeyCheck } from "./auth.js";
import { FaultPlan } from "./faults.js";
import { IdempotencyStore } from "./idempotency.js";
import { Ledger } from "./ledger.js";
import type { SandboxOptions } from "./options.js";
import { resolvePrices } from "./prices.js";
import { randomHex } from "./random.js";
import { ResultFiles } from "./result-files.js";
import { ResultLinks } from "./signing.js";
import { Slots } from "./slots.js";
import { Stats } from "./stats.js";
import { TaskStore } from "./tasks.js";
import type { ViewContext } from "./task-view.js";
import { WebhookReceiver } from "./webhooks.js";

/** Everything a route handler works with: the one sandbox's state and settings. */
export interface SandboxCore {
  readonly options: SandboxOptions;
  readonly prices: Readonly<Record<ServiceType, number>>;
  readonly ledger: Ledger;
  readonly tasks: TaskStore;
  readonly slots: Slots;
  readonly idempotency: IdempotencyStore;
  readonly faults: FaultPlan;
  readonly stats: Stats;
  readonly links: ResultLinks;
  readonly webhooks: WebhookReceiver;
  readonly files: ResultFiles;
  readonly keyMatches: (given: string | string[] | undefined) => boolean;
  /** Aborted by close(): stops background work and pending delays. */
  readonly lifetime: AbortSignal;
  /** What task views need to render result links at `nowMs`. */
  viewAt(nowMs: number): ViewContext;
}

/** What only exists once the listeners are up: the origin result links point at, and where result files go. */
export interface CoreEnvironment {
  resultOrigin: string;
  tempDir: string;
  lifetime: AbortSignal;
}

/** Builds a fresh sandbox state: full balance, no tasks, a new URL-signing secret. */
export function createCore(options: SandboxOptions, env: CoreEnvironment): SandboxCore {
  const ledger = new Ledger(options.balanceMicros);
  const links = new ResultLinks(randomHex(32), env.resultOrigin, options.urlTtlSeconds);
  return {
    options,
    prices: resolvePrices(options.prices),
    ledger,
    tasks: new TaskStore(ledger, options, env.lifetime),
    slots: new Slots(options.maxInFlight),
    idempotency: new IdempotencyStore(),
    faults: new FaultPlan(options.chaos, options.chaosFaults, options.seed),
    stats: new Stats(),
    links,
    webhooks: new WebhookReceiver(options.verifyWebhook, options.now),
    files: new ResultFiles(env.tempDir, options.resultFormat, options.seed, options.noResultRate, options.drift, env.lifetime),
    keyMatches: createKeyCheck(options.apiKey),
    lifetime: env.lifetime,
    viewAt: (nowMs) => ({ links, resultFormat: options.resultFormat, resultDelaySeconds: options.resultDelaySeconds, nowMs }),
  };
}

import { createPrng } from "./random.js";

/**
 * Fault injection: what can go wrong, where it can go wrong, and which request
 * gets it. Scripted faults (tests, `POST /_sandbox/faults`) take precedence over
 * chaos; chaos draws from a seeded PRNG, so the same seed and the same sequence of
 * requests give the same faults.
 *
 * | kind | effect |
 * |---|---|
 * | 42901, 50303 | envelope error with Retry-After |
 * | 50400, 50300, 42900 | envelope error |
 * | drop | socket destroyed before any response |
 * | drop-mid-upload | part of the submit body read, then the socket destroyed |
 * | drop-after-commit | submit processed (task created and reserved), socket destroyed instead of the response |
 * | malformed-after-commit | submit processed (task created and reserved), answered with the task whose created_at is no timestamp |
 * | drop-mid-download | part of the result file sent, then the socket destroyed |
 * | endless-download | the result file sent, then blank lines without end (no Content-Length), until the client goes away |
 * | html | HTTP 502 with an HTML page |
 * | truncated-json | HTTP 200 whose JSON body stops halfway |
 * | no-code-envelope | HTTP 200 with JSON lacking `code` |
 * | slow | response delayed (default 3 s), then served normally |
 *
 * Every fault except drop-after-commit and malformed-after-commit (and slow, which
 * then serves normally) happens before any state change, so nothing is created or charged.
 *
 * Chaos draws from every kind but endless-download (CHAOS_FAULT_KINDS) unless it is
 * named: a body that never ends takes a client until the bound it puts on a result.
 */
export const FAULT_KINDS = [
  "42901",
  "50303",
  "50400",
  "50300",
  "42900",
  "drop",
  "drop-mid-upload",
  "drop-after-commit",
  "malformed-after-commit",
  "drop-mid-download",
  "endless-download",
  "html",
  "truncated-json",
  "no-code-envelope",
  "slow",
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

/** What chaos draws from when no list is given: every kind but a body that never ends. */
export const CHAOS_FAULT_KINDS: readonly FaultKind[] = FAULT_KINDS.filter((kind) => kind !== "endless-download");

/** Routes that faults can hit. Admin endpoints are never faulted. */
export type FaultRoute = "submit" | "check" | "balance" | "result";

export interface ScriptedFault {
  route: FaultRoute | "any";
  fault: FaultKind;
  /** Raw Retry-After value for 42901/50303 (seconds or an HTTP date); default: the `retryAfterSeconds` option. */
  retryAfter?: string;
  /** How many matching requests get this fault; default 1. */
  times?: number;
  /** Delay of a `slow` fault in ms; default 3000. */
  delayMs?: number;
}

export interface FaultDraw {
  kind: FaultKind;
  source: "scripted" | "chaos";
  retryAfter?: string;
  delayMs?: number;
}

const ENVELOPE_ROUTES: readonly FaultRoute[] = ["submit", "check", "balance"];
const ALL_ROUTES: readonly FaultRoute[] = ["submit", "check", "balance", "result"];

const ROUTES_BY_KIND: Readonly<Record<FaultKind, readonly FaultRoute[]>> = {
  "42901": ENVELOPE_ROUTES,
  "50303": ENVELOPE_ROUTES,
  "50400": ENVELOPE_ROUTES,
  "50300": ENVELOPE_ROUTES,
  "42900": ENVELOPE_ROUTES,
  "truncated-json": ENVELOPE_ROUTES,
  "no-code-envelope": ENVELOPE_ROUTES,
  drop: ALL_ROUTES,
  html: ALL_ROUTES,
  slow: ALL_ROUTES,
  "drop-mid-upload": ["submit"],
  "drop-after-commit": ["submit"],
  "malformed-after-commit": ["submit"],
  "drop-mid-download": ["result"],
  "endless-download": ["result"],
};

/** Whether a fault kind makes sense on a route (a scripted "any" fault waits for a route where it does). */
export function faultApplies(kind: FaultKind, route: FaultRoute): boolean {
  return ROUTES_BY_KIND[kind].includes(route);
}

export function isFaultKind(value: unknown): value is FaultKind {
  return typeof value === "string" && (FAULT_KINDS as readonly string[]).includes(value);
}

function parseOne(value: unknown, index: number): ScriptedFault {
  const where = `fault #${index + 1}`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${where} must be an object`);
  const { route, fault, retryAfter, times, delayMs } = value as Record<string, unknown>;
  if (route !== "any" && !(ALL_ROUTES as readonly unknown[]).includes(route)) {
    throw new Error(`${where}: route must be one of any, ${ALL_ROUTES.join(", ")}`);
  }
  if (!isFaultKind(fault)) throw new Error(`${where}: fault must be one of ${FAULT_KINDS.join(", ")}`);
  if (route !== "any" && !faultApplies(fault, route as FaultRoute)) {
    throw new Error(`${where}: ${fault} cannot happen on route ${String(route)}`);
  }
  if (retryAfter !== undefined && (typeof retryAfter !== "string" || /[\r\n]/.test(retryAfter))) {
    throw new Error(`${where}: retryAfter must be a header value string`);
  }
  if (times !== undefined && !(Number.isSafeInteger(times) && (times as number) >= 1)) {
    throw new Error(`${where}: times must be a whole number of at least 1`);
  }
  if (delayMs !== undefined && !(Number.isSafeInteger(delayMs) && (delayMs as number) >= 0)) {
    throw new Error(`${where}: delayMs must be a whole number of milliseconds`);
  }
  const parsed: ScriptedFault = { route: route as ScriptedFault["route"], fault };
  if (retryAfter !== undefined) parsed.retryAfter = retryAfter;
  if (times !== undefined) parsed.times = times as number;
  if (delayMs !== undefined) parsed.delayMs = delayMs as number;
  return parsed;
}

/** Validates a JSON array of scripted faults; throws an Error saying which entry is wrong. */
export function parseScriptedFaults(value: unknown): ScriptedFault[] {
  if (!Array.isArray(value)) throw new Error("expected a JSON array of faults");
  return value.map((item: unknown, index) => parseOne(item, index));
}

interface QueuedFault {
  fault: ScriptedFault;
  remaining: number;
}

/** Decides, request by request, whether a fault is injected. */
export class FaultPlan {
  private readonly queue: QueuedFault[] = [];
  private readonly random: () => number;

  constructor(
    private readonly chaos: number,
    private readonly chaosKinds: readonly FaultKind[],
    seed: number,
  ) {
    this.random = createPrng(seed, "chaos");
  }

  /** Queues faults, in order, for the next matching requests. Throws on an invalid entry. */
  script(faults: readonly ScriptedFault[]): void {
    for (const fault of parseScriptedFaults(faults)) this.queue.push({ fault, remaining: fault.times ?? 1 });
  }

  /** Scripted faults still waiting for a matching request. */
  pending(): number {
    return this.queue.reduce((sum, queued) => sum + queued.remaining, 0);
  }

  /** The fault for one request on `route`, if any; consumes a scripted fault or one or two chaos draws. */
  draw(route: FaultRoute): FaultDraw | undefined {
    const index = this.queue.findIndex(({ fault }) => (fault.route === "any" || fault.route === route) && faultApplies(fault.fault, route));
    const queued = this.queue[index];
    if (queued) {
      queued.remaining -= 1;
      if (queued.remaining === 0) this.queue.splice(index, 1);
      const { fault: kind, retryAfter, delayMs } = queued.fault;
      return {
        kind,
        source: "scripted",
        ...(retryAfter === undefined ? {} : { retryAfter }),
        ...(delayMs === undefined ? {} : { delayMs }),
      };
    }
    if (this.chaos <= 0 || this.random() >= this.chaos) return undefined;
    const candidates = this.chaosKinds.filter((kind) => faultApplies(kind, route));
    const kind = candidates[Math.floor(this.random() * candidates.length)];
    return kind === undefined ? undefined : { kind, source: "chaos" };
  }
}

import { RunRecordError } from "../store/health.js";
import type { RunRecord } from "../store/store.js";
import type { RunPlan } from "./plan.js";

/**
 * What a run's record keeps as JSON, read back as typed values here and nowhere else: the
 * store hands it over as it was written (`unknown`), by this release or an earlier one, or
 * changed by hand. A record that is not what bulkcheck writes is refused with RunRecordError,
 * never read as if it were. How the list was read and what preparation found (`settings`,
 * `prepared`) are read in tasks/origins.ts, below the run, where downloads and joins need them.
 */

/** Where a run's output went, as finishRun keeps it: a file, or (no path) stdout. */
export interface RunOutputRecord {
  path?: string;
  /** For a run of a chain (submit --then): every product's run, in chain order, and each later one's condition. */
  chain?: ChainLink[];
}

/** A product's run of a chain, as its output record keeps it. */
export interface ChainLink {
  product: string;
  run: string;
  /** `PRODUCT:COLUMN=VALUE,...`: which earlier product's results chose its numbers; absent for the first, and for one checked on every number. */
  condition?: string;
  /** For a run of the product part by part: the first product's parts it was bought for (`1–2 of 5`). */
  parts?: string;
}

/** The plan a run made before its first upload; undefined for a run that made none (stopped before it, or adopted from 0.1). */
export function planOf(run: Pick<RunRecord, "id" | "plan">): RunPlan | undefined {
  const { plan } = run;
  if (plan === undefined || plan === null) return undefined;
  const problem = planProblem(plan);
  if (problem) throw new RunRecordError(run.id, "plan", problem);
  return plan as RunPlan;
}

/** Where a finished run's output went, if it had one. */
export function outputOf(run: Pick<RunRecord, "id" | "output">): RunOutputRecord | undefined {
  const { output } = run;
  if (output === undefined || output === null) return undefined;
  if (!isObject(output)) throw new RunRecordError(run.id, "output", "it is not an object");
  if (output.path !== undefined && typeof output.path !== "string") throw new RunRecordError(run.id, "output", "its path is not text");
  const chain = chainOf(output.chain);
  if (chain === "unreadable") throw new RunRecordError(run.id, "output", "its chain is not a list of products and runs");
  return { ...(output.path === undefined ? {} : { path: output.path }), ...(chain ? { chain } : {}) };
}

function chainOf(chain: unknown): ChainLink[] | undefined | "unreadable" {
  if (chain === undefined) return undefined;
  const isLink = (link: unknown): link is ChainLink =>
    isObject(link) &&
    typeof link.product === "string" &&
    typeof link.run === "string" &&
    (link.condition === undefined || typeof link.condition === "string") &&
    (link.parts === undefined || typeof link.parts === "string");
  return Array.isArray(chain) && chain.every(isLink) ? chain : "unreadable";
}

/** What keeps `plan` from being a RunPlan of version 1, as far as a reader relies on it. */
function planProblem(plan: unknown): string | undefined {
  if (!isObject(plan)) return "it is not an object";
  if (plan.version !== 1) return `its version is ${JSON.stringify(plan.version)}, not 1`;
  for (const field of ["kept", "reused", "padded", "priceMicros", "reservationMicros", "savedMicros"]) {
    if (!Number.isFinite(plan[field])) return `its ${field} is not a number`;
  }
  if (typeof plan.list !== "string") return "its list fingerprint is not text";
  if (!Array.isArray(plan.parts) || !plan.parts.every((part) => isObject(part) && Number.isInteger(part.count))) {
    return "its parts are not a list of parts with their counts";
  }
  const { limits } = plan;
  if (!isObject(limits) || !["minTaskSize", "maxTaskSize", "maxFileBytes"].every((limit) => Number.isFinite(limits[limit]))) {
    return "its limits are not numbers";
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

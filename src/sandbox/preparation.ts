import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { CountryCode } from "libphonenumber-js/max";
import { classifyCell } from "../prepare/classify.js";
import type { ServiceType } from "../spec/products.js";
import { hasNoResult } from "./result-values.js";

/** What preparation found in a file. */
export interface Prepared {
  invalid: number;
  noCode: number;
  otherCountry: number;
  duplicate: number;
  /** How many identifiers were kept for checking. */
  keptCount: number;
  /**
   * The kept identifiers, first occurrence order, until the task's result file
   * is built: then the file holds them and they are released (`undefined`), so a
   * sandbox serving thousands of tasks keeps only their counts in memory.
   */
  kept: readonly string[] | undefined;
  /** How many kept numbers get no result (failure_cnt of a successful task). */
  noResult: number;
}

export interface PreparationInput {
  lines: readonly string[];
  /** "" for a carrier task sent without a country: numbers must carry their own code. */
  country: string;
  product: ServiceType;
  seed: number;
  noResultRate: number;
}

/** Lines classified between two yields to the event loop (about 50-70 ms of work). */
const LINES_PER_TURN = 2_000;

/**
 * Classifies a task's lines the way the service does: `classifyCell` with
 * `requireCountryCode: true`, then dedup on the identifier among kept numbers (a
 * repeated invalid line counts as invalid again, not as a duplicate). Works in
 * slices, yielding between them, so a 500,000-line file never blocks the server;
 * stops with an AbortError when `signal` fires.
 */
export async function prepareLines(input: PreparationInput, signal: AbortSignal): Promise<Prepared> {
  const options = {
    requireCountryCode: true,
    ...(input.country === "" ? {} : { country: input.country as CountryCode }),
  };
  const seen = new Set<string>();
  const kept: string[] = [];
  let invalid = 0;
  let noCode = 0;
  let otherCountry = 0;
  let duplicate = 0;
  let noResult = 0;
  for (let start = 0; start < input.lines.length; start += LINES_PER_TURN) {
    await yieldToLoop(undefined, { signal });
    for (const line of input.lines.slice(start, start + LINES_PER_TURN)) {
      const cell = classifyCell(line, options);
      if (cell.class === "kept" && cell.identifier !== undefined) {
        if (seen.has(cell.identifier)) {
          duplicate += 1;
          continue;
        }
        seen.add(cell.identifier);
        kept.push(cell.identifier);
        if (hasNoResult(input.seed, input.product, cell.identifier, input.noResultRate)) noResult += 1;
      } else if (cell.class === "no_code") noCode += 1;
      else if (cell.class === "other_country") otherCountry += 1;
      else invalid += 1;
    }
  }
  return { invalid, noCode, otherCountry, duplicate, keptCount: kept.length, kept, noResult };
}

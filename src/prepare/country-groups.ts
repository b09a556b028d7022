import { rm } from "node:fs/promises";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { IdentifierKey } from "../spec/identifier-key.js";
import { callingCodePlans } from "./numbering-plans.js";
import type { CountryGroupsRecord } from "./settings.js";
import { UploadSpool, type UploadChunk, type UploadTarget } from "./upload-writer.js";
import { count } from "../format-count.js";

/** libphonenumber's region of numbers that belong to no country (+800, +808, +870, +881…), which no country's task takes. */
const NON_GEOGRAPHIC = "001";

/** A part of an upload list grouped by country: the numbers of one country, checked in a task of that country. */
export interface CountryChunk extends UploadChunk {
  country: string;
}

/**
 * The country whose task checks a kept number under `--country auto`: the main country
 * of its calling code (+44 1534, Jersey, is GB's; +1 416, Toronto, is US's; +7 7…,
 * Kazakhstan, is RU's), or NON_GEOGRAPHIC. The service routes on the calling code and
 * keeps a number whose code is the task country's, so a GB list keeps the same numbers
 * under `--country auto` as under `--country GB`, instead of splitting off JE, GG and IM
 * into groups too small for a task.
 */
export function countryOfIdentifier(identifier: string): string {
  // Calling codes are prefix-free: the first 1–3 digit prefix that is one is the number's.
  for (let length = 1; length <= MAX_CALLING_CODE_LENGTH; length++) {
    const plans = callingCodePlans(Number(identifier.slice(0, length)));
    if (plans !== undefined) return plans.main.country ?? NON_GEOGRAPHIC;
  }
  return NON_GEOGRAPHIC;
}

const MAX_CALLING_CODE_LENGTH = 3;

/** The numbers of each country in an upload list, in the order each country first appears. */
export async function countCountries(listPath: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const identifier of lines(listPath)) {
    const country = countryOfIdentifier(identifier);
    counts.set(country, (counts.get(country) ?? 0) + 1);
  }
  return counts;
}

/** The country that holds most of a prepared list's numbers, with their count and the list's. */
export interface MainCountry {
  country: string;
  numbers: number;
  of: number;
}

/**
 * The country (as `countryOfIdentifier` names it) holding more than half of the numbers
 * of these upload lists; undefined when none does. The evidence for reading a list's
 * nationally written numbers as that country's.
 */
export async function mainCountryOf(lists: readonly UploadChunk[]): Promise<MainCountry | undefined> {
  const counts = new Map<string, number>();
  for (const list of lists) {
    for (const [country, numbers] of await countCountries(list.path)) counts.set(country, (counts.get(country) ?? 0) + numbers);
  }
  const of = [...counts.values()].reduce((sum, numbers) => sum + numbers, 0);
  const [country, numbers] = [...counts].reduce((best, each) => (each[1] > best[1] ? each : best), ["", 0]);
  return numbers * 2 > of && country !== NON_GEOGRAPHIC ? { country, numbers, of } : undefined;
}

/**
 * The grouping of an upload list: the countries with fewer numbers than the service's
 * minimum task size (and numbers of no country), whose rows are then `below_min_task`.
 */
export function countryGroups(
  counts: ReadonlyMap<string, number>,
  limits: { minTaskSize: number; maxTaskSize: number },
): CountryGroupsRecord {
  const belowMin: Record<string, number> = {};
  for (const [country, numbers] of counts) {
    if (numbers < limits.minTaskSize || country === NON_GEOGRAPHIC) belowMin[country] = numbers;
  }
  return { minTaskSize: limits.minTaskSize, maxTaskSize: limits.maxTaskSize, belowMin };
}

/**
 * Why a kept number is not submitted under a grouping: its country's numbers are too few
 * for a task (or it has none). Undefined for a number that is submitted.
 */
export function belowMinCheck(groups: CountryGroupsRecord | undefined): ((key: IdentifierKey) => string | undefined) | undefined {
  if (groups === undefined || Object.keys(groups.belowMin).length === 0) return undefined;
  return (key) => {
    const country = countryOfIdentifier(String(key));
    const numbers = groups.belowMin[country];
    if (numbers === undefined) return undefined;
    if (country === NON_GEOGRAPHIC) return "number belongs to no country, so no country's task can take it";
    return `${country} has ${count(numbers)} numbers to check, fewer than the minimum task size of ${count(groups.minTaskSize)}`;
  };
}

/**
 * Splits an upload list into one list per country, countries in the order they first
 * appear and each list in the upload's order, each split further above `maxTaskSize` into
 * balanced parts (as UploadSpool splits). The list itself is removed.
 */
export async function splitByCountry(list: UploadChunk, target: UploadTarget, maxTaskSize: number): Promise<CountryChunk[]> {
  const spools = new Map<string, UploadSpool>();
  try {
    let pending = 0;
    for await (const identifier of lines(list.path)) {
      const country = countryOfIdentifier(identifier);
      let spool = spools.get(country);
      if (spool === undefined) {
        spool = await UploadSpool.create(countryTarget(target, country));
        spools.set(country, spool);
      }
      spool.add(identifier);
      if (++pending === FLUSH_EVERY) {
        for (const each of spools.values()) await each.flush();
        pending = 0;
      }
    }
    const chunks: CountryChunk[] = [];
    for (const [country, spool] of spools) {
      for (const chunk of await spool.finish(maxTaskSize)) chunks.push({ ...chunk, country });
    }
    spools.clear();
    await rm(list.path, { force: true });
    return chunks;
  } finally {
    for (const spool of spools.values()) await spool.discard();
  }
}

/** Identifiers between flushes of the per-country files: memory stays that of a block of rows. */
const FLUSH_EVERY = 65_536;

function countryTarget(target: UploadTarget, country: string): UploadTarget {
  if ("dir" in target) return { dir: target.dir, base: `${target.base}-${country}` };
  return { file: target.file.replace(/(\.[^./]*)?$/, `-${country}$1`) };
}

function lines(path: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(path), crlfDelay: Infinity });
}

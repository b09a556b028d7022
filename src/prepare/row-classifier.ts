import { classifyCell, type Classification, type ClassifyOptions, type RowClass } from "./classify.js";
import { identifierKey, type IdentifierKey } from "../spec/identifier-key.js";
import { belowMinCheck } from "./country-groups.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import type { PreparationSettings } from "./settings.js";

/** One row's outcome: the cell's classification, with duplicates decided. */
export interface RowResult extends Omit<Classification, "class"> {
  class: RowClass;
  /** For a duplicate: the line of the first row with the same identifier (which `identifier` repeats). */
  firstLine?: number;
}

export interface RowClassifier {
  /** Classifies a row's phone cell, in file order. */
  classify(cell: string, line: number): RowResult;
  /** Same, for a cell classified elsewhere with `classifyCell` and these settings. */
  admit(cell: Classification, line: number): RowResult;
  /**
   * The duplicate check of `admit` for a kept cell whose identifier arrives as
   * its key (from a worker): the line of the first occurrence, or undefined
   * when this is the first (and it is now recorded).
   */
  admitKept(key: IdentifierKey, line: number): number | undefined;
  /** Under `--country auto`, why a kept number is `below_min_task` (checked before admitKept), else undefined. */
  belowMin(key: IdentifierKey): string | undefined;
}

/**
 * The stateful half of classification: remembers each kept identifier and its
 * line so a later row with the same identifier is a `duplicate` of it. Only kept
 * rows take part: a repeated foreign or invalid number is reported as what it is.
 * `prepareList` runs every row through `admit`, and the join reuses this with
 * the stored PreparationSettings, so both agree by construction. Memory grows
 * with the number of distinct kept identifiers, and nothing else; `onFirstSeen`
 * gets each kept identifier once, in first-seen order (preparation writes the
 * upload file from it).
 */
export function createRowClassifier(
  settings: ClassifyOptions & Pick<PreparationSettings, "countryGroups">,
  onFirstSeen?: (key: IdentifierKey) => void,
): RowClassifier {
  const options: ClassifyOptions = {
    ...(settings.country === undefined ? {} : { country: settings.country }),
    requireCountryCode: settings.requireCountryCode ?? false,
    strictRegion: settings.strictRegion ?? false,
    ...(settings.anyRegion ? { anyRegion: true } : {}),
    // Settings journalled before ambiguous digit strings were decided read them with their calling code.
    digitsAs: settings.digitsAs ?? "international",
  };
  const kept = new IdentifierSet();
  const admitKept = (key: IdentifierKey, line: number) => {
    const firstLine = kept.firstLineOf(key, line);
    if (firstLine === undefined) onFirstSeen?.(key);
    return firstLine;
  };
  const belowMinReason = belowMinCheck(settings.countryGroups);
  const belowMin = (key: IdentifierKey) => belowMinReason?.(key);
  const admit = (cell: Classification, line: number): RowResult => {
    if (cell.class !== "kept") return cell;
    const identifier = cell.identifier!;
    const excluded = belowMin(identifier);
    if (excluded !== undefined) return { class: "below_min_task", identifier, reason: excluded };
    const firstLine = admitKept(identifierKey(identifier), line);
    if (firstLine === undefined) return cell;
    return { class: "duplicate", identifier, firstLine, reason: duplicateReason(firstLine) };
  };
  return {
    classify: (cell, line) => admit(classifyCell(cell, options), line),
    admit,
    admitKept,
    belowMin,
  };
}

/** The rejects reason of a duplicate. */
export function duplicateReason(firstLine: number): string {
  return `duplicate of line ${firstLine}`;
}

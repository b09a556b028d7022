import { classifyCell, type Classification, type ClassifyOptions, type RowClass } from "./classify.js";

/** One row's outcome: the cell's classification, with duplicates decided. */
export interface RowResult extends Omit<Classification, "class"> {
  class: RowClass;
  /** For a duplicate: the line of the first row with the same identifier (which `identifier` repeats). */
  firstLine?: number;
}

export interface RowClassifier {
  /** Classifies a row's phone cell, in file order. */
  classify(cell: string, line: number): RowResult;
  /** Same, for a cell classified elsewhere (a worker thread) with `classifyCell` and these settings. */
  admit(cell: Classification, line: number): RowResult;
  /** Kept identifiers in first-seen order: exactly the upload list. */
  keptIdentifiers(): IterableIterator<string>;
  readonly keptCount: number;
}

/**
 * The stateful half of classification: remembers each kept identifier and its
 * line so a later row with the same identifier is a `duplicate` of it. Only kept
 * rows take part: a repeated foreign or invalid number is reported as what it is.
 * `prepareList` runs every row through `admit`, and the join reuses this with
 * the stored PreparationSettings, so both agree by construction. Memory grows
 * with the number of distinct kept identifiers, and nothing else.
 */
export function createRowClassifier(settings: ClassifyOptions): RowClassifier {
  const options: ClassifyOptions = {
    ...(settings.country === undefined ? {} : { country: settings.country }),
    requireCountryCode: settings.requireCountryCode ?? false,
    strictRegion: settings.strictRegion ?? false,
  };
  const firstLines = new Map<string, number>();
  const admit = (cell: Classification, line: number): RowResult => {
    if (cell.class !== "kept") return cell;
    const identifier = cell.identifier!;
    const firstLine = firstLines.get(identifier);
    if (firstLine === undefined) {
      firstLines.set(identifier, line);
      return cell;
    }
    return { class: "duplicate", identifier, firstLine, reason: `duplicate of line ${firstLine}` };
  };
  return {
    classify: (cell, line) => admit(classifyCell(cell, options), line),
    admit,
    keptIdentifiers: () => firstLines.keys(),
    get keptCount() {
      return firstLines.size;
    },
  };
}

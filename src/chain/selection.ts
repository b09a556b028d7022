import { join } from "node:path";
import type { UploadChunk } from "../prepare/index.js";
import { readResults, type ResultSource } from "../results/read-results.js";
import { identifierKey, type IdentifierKey } from "../spec/identifier-key.js";
import { IdentifierSet } from "../spec/identifier-set.js";
import { resultLabel, type StagedResults } from "../tasks/download.js";
import { writeKept } from "../tasks/list-slice.js";
import { conditionHolds, type ChainCondition } from "./chain.js";

/** Which of a list's numbers a later product of a chain is checked on. */
export interface Selection {
  /** The numbers its condition selects; absent without a condition (every number the run keeps). */
  selected?: IdentifierSet;
  /** The numbers with a result of the product the condition reads (a number without one cannot be selected); none without a condition. */
  answered: IdentifierSet;
  /** The numbers of the first product's failed tasks: left out of every later product (see ChainOutcome.firstFailed). */
  leftOut?: IdentifierSet;
}

/** Whether a selection checks a number (its key). */
export function isSelected(selection: Selection, key: IdentifierKey): boolean {
  return (!selection.selected || selection.selected.has(key)) && !selection.leftOut?.has(key);
}

/** A run's results as rows (header first, `identifier` first), from its staged tasks and the ledger's reused results. */
export function stagedRows(staged: StagedResults, options: { signal?: AbortSignal; checkedAt?: boolean } = {}) {
  const sources: ResultSource[] = [
    ...staged.tasks.map((task) => ({
      label: resultLabel(task.id),
      task,
      open: () => staged.read(task),
      checkedAt: staged.checkedAt(task),
    })),
    ...staged.reused,
  ];
  return readResults(sources, { serviceType: staged.product, ...options });
}

/** The numbers whose result (of the condition's product, `staged`) has one of the condition's values in its column. */
export async function selectNumbers(condition: ChainCondition, staged: StagedResults, signal?: AbortSignal): Promise<Selection> {
  const selected = new IdentifierSet();
  const answered = new IdentifierSet();
  let column = -1;
  for await (const row of stagedRows(staged, signal ? { signal } : {})) {
    if (column < 0) {
      column = row.indexOf(condition.column);
      continue;
    }
    const identifier = row[0];
    if (!identifier) continue;
    const key = identifierKey(identifier);
    answered.set(key, 0);
    if (conditionHolds(condition, row[column])) selected.set(key, 0);
  }
  return { selected, answered };
}

/**
 * The run's parts (its prepared list) with only the selected numbers, in order, each part keeping
 * its country; without those `taken` (bought already by the product's runs part by part).
 */
export async function selectedParts(
  parts: readonly UploadChunk[],
  selection: Selection,
  dir: string,
  taken?: IdentifierSet,
): Promise<UploadChunk[]> {
  if (!selection.selected && !selection.leftOut && !taken) return [...parts];
  const keep = (key: IdentifierKey) => isSelected(selection, key) && !taken?.has(key);
  const written: UploadChunk[] = [];
  for (const [index, part] of parts.entries()) {
    const chunk = await writeKept(part.path, (identifier) => keep(identifierKey(identifier)), join(dir, `selected-${index}.txt`));
    written.push(part.country === undefined ? chunk : { ...chunk, country: part.country });
  }
  // A part none of whose numbers is selected is no task; a list with none selected is one empty part, as an empty list is.
  const kept = written.filter((part) => part.count > 0);
  return kept.length > 0 ? kept : written.slice(0, 1);
}

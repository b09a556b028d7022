/**
 * "Did you mean …?" for a value a user typed that is not one of the known ones:
 * the same value in another case or with `-`/spaces for `_` (`Carrier_Batch`,
 * `carrier-batch`), a misspelling a few edits away (`carier_batch`), or a unique
 * part of a longer name (`carrier` for `carrier_batch`). Undefined when nothing is
 * close enough to be a likely intent, or two candidates are equally close.
 */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const typed = normalised(input);
  if (typed === "") return undefined;
  const exact = candidates.filter((candidate) => normalised(candidate) === typed);
  if (exact.length > 0) return exact.length === 1 ? exact[0] : undefined;
  // A few edits, more for longer words: about one in four characters, at least one.
  const allowed = Math.max(1, Math.floor(typed.length / 4));
  let best: string | undefined;
  let bestDistance = Infinity;
  let tied = false;
  for (const candidate of candidates) {
    const distance = editDistance(typed, normalised(candidate));
    if (distance > allowed || distance > bestDistance) continue;
    tied = distance === bestDistance;
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  if (best !== undefined) return tied ? undefined : best;
  const containing = candidates.filter((candidate) => `_${normalised(candidate)}_`.includes(`_${typed}_`));
  return containing.length === 1 ? containing[0] : undefined;
}

/** " Did you mean X?" to end a message with, or "" when nothing was meant. */
export function didYouMean(meant: string | undefined): string {
  return meant === undefined ? "" : ` Did you mean ${meant}?`;
}

/** Lower case, accents dropped, and every run of spaces, dashes or dots one `_`. */
export function normalised(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .trim()
    .replace(/[\s\-.]+/g, "_");
}

/** Damerau–Levenshtein distance (optimal string alignment): a swap of two neighbours is one edit. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = distance;
    }
  }
  return rows[a.length]![b.length]!;
}

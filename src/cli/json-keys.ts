/**
 * A value for --json with every object key in snake_case (`chosenBy` →
 * `chosen_by`), deeply: the service's fields are snake_case, and so is every
 * key bulkcheck adds beside them, so a script reads one convention. Keys that
 * are data (region codes such as "GG", already snake_case names) are unchanged.
 */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [snakeCase(key), snakeCaseKeys(inner)]));
}

function snakeCase(key: string): string {
  return /^[a-z][a-zA-Z0-9]*$/.test(key) ? key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`) : key;
}

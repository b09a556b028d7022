import type { CellClass, Classification } from "./classify.js";

/**
 * Classifications packed for a worker message: one byte per cell for the class
 * and flags, and the cells' strings joined with NUL (which never occurs in a
 * decoded list). Structured-cloning one object per cell costs more than the
 * classification itself; this is two allocations per batch.
 */
export interface EncodedClassifications {
  codes: Uint8Array;
  /** identifier, reason, sharedRegion, extension of each cell, "" when absent. */
  strings: string;
}

const CLASSES: readonly CellClass[] = ["kept", "blank", "invalid", "no_code", "other_country"];
const NATIONAL = 0x80;
const SEPARATOR = "\0";
const FIELDS = 4;

export function encodeClassifications(list: readonly Classification[]): EncodedClassifications {
  const codes = new Uint8Array(list.length);
  const strings: string[] = [];
  list.forEach((c, i) => {
    codes[i] = CLASSES.indexOf(c.class) | (c.national ? NATIONAL : 0);
    strings.push(c.identifier ?? "", c.reason ?? "", c.sharedRegion ?? "", c.extension ?? "");
  });
  return { codes, strings: strings.join(SEPARATOR) };
}

/** Inverse of encodeClassifications: equal objects, with absent properties left out. */
export function decodeClassifications(encoded: EncodedClassifications): Classification[] {
  const strings = encoded.strings.split(SEPARATOR);
  const list: Classification[] = [];
  for (let i = 0; i < encoded.codes.length; i++) {
    const code = encoded.codes[i]!;
    const c: Classification = { class: CLASSES[code & ~NATIONAL]! };
    const [identifier, reason, sharedRegion, extension] = strings.slice(i * FIELDS, i * FIELDS + FIELDS);
    if (identifier) c.identifier = identifier;
    if (reason) c.reason = reason;
    if (code & NATIONAL) c.national = true;
    if (sharedRegion) c.sharedRegion = sharedRegion;
    if (extension) c.extension = extension;
    list.push(c);
  }
  return list;
}

/** Cells joined for a message; split back with splitCells. */
export function joinCells(cells: readonly string[]): string {
  return cells.join(SEPARATOR);
}

export function splitCells(joined: string): string[] {
  return joined.split(SEPARATOR);
}

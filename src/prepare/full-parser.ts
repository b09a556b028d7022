import { createRequire } from "node:module";
import type * as Library from "libphonenumber-js/max";

let library: typeof Library | undefined;

/**
 * libphonenumber-js (max) itself, loaded on first use. Most lists never need it:
 * after cleaning, nearly every cell is plain digits, which digit-parser.ts reads
 * over the same metadata. Loading the whole library cost each worker thread
 * ~100-250 ms of its start-up.
 */
export function fullParser(): typeof Library {
  library ??= createRequire(import.meta.url)("libphonenumber-js/max") as typeof Library;
  return library;
}

import { randomBytes } from "node:crypto";

/**
 * Randomness in two flavours. Seeded functions make chaos, task failures and result
 * values reproducible for a given `seed`; `randomHex` is for what must not be
 * guessable or repeat across runs (task ids, API keys, the URL-signing secret).
 */

/** cyrb53: a fast, well-mixed 53-bit string hash. Not cryptographic. */
function hash53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** A number in [0, 1) fixed by the seed and the parts: the same inputs always give the same draw. */
export function hashUnit(seed: number, ...parts: readonly string[]): number {
  return hash53(parts.join("\u0000"), seed) / 2 ** 53;
}

/**
 * mulberry32: a small, fast PRNG returning numbers in [0, 1), the same sequence for
 * the same 32-bit seed on every run. The sandbox, the tests' generated inputs and the
 * benchmarks' data generators all draw from this one.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seeded PRNG returning numbers in [0, 1). Each `stream` name gives an independent
 * sequence, so drawing chaos does not shift any other seeded sequence.
 */
export function createPrng(seed: number, stream: string): () => number {
  return mulberry32(hash53(stream, seed));
}

/** Cryptographically random lowercase hex of `bytes` bytes. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

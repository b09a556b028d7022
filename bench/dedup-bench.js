#!/usr/bin/env node
// The dedup set at scale: 20 million distinct identifiers added to preparation's
// IdentifierSet (each with its line), then every one looked up again, in a process of
// its own so the peak RSS is the set's. Prints one JSON object.
//   npm run build && node bench/dedup-bench.js [count=20000000]
// Env: BULKCHECK_DIST  compiled library (default ../dist)
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dist = resolve(process.env.BULKCHECK_DIST ?? join(import.meta.dirname, "..", "dist"));
const { IdentifierSet } = await import(pathToFileURL(join(dist, "spec", "identifier-set.js")).href);
const count = Number(process.argv[2] ?? 20_000_000);

/** The i-th of `count` distinct 12-digit numbers, scattered: multiplying by an odd constant permutes 30-bit values. */
const identifier = (i) => 440_000_000_000 + (Math.imul(i, 0x9e3779b1) & 0x3fffffff) * 7;

const set = new IdentifierSet();
const started = performance.now();
for (let i = 0; i < count; i++) {
  if (set.firstLineOf(identifier(i), i + 1) !== undefined) throw new Error(`identifier ${i} seen twice`);
}
const addedMs = performance.now() - started;
let wrong = 0;
for (let i = 0; i < count; i++) if (set.firstLineOf(identifier(i), 0) !== i + 1) wrong++;
const lookedUpMs = performance.now() - started - addedMs;
const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(
  JSON.stringify({
    name: "dedup",
    identifiers: count,
    size: set.size,
    wrong_lines: wrong,
    add_s: Number((addedMs / 1000).toFixed(2)),
    lookup_s: Number((lookedUpMs / 1000).toFixed(2)),
    peak_rss_mb: peakRssMb,
    bytes_per_identifier: Number(((peakRssMb * 2 ** 20) / count).toFixed(1)),
  }),
);

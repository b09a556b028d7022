#!/usr/bin/env node
/**
 * Generates the scale benchmark's inputs, deterministically: a plain list of `lines`
 * distinct valid GB mobile numbers (07400 000000 … 07449 999999 are all mobile ranges),
 * in a scrambled order, half written +44 7…, half 07…, one a line.
 *   bench/data/distinct-<lines>.txt
 * Usage: node bench/gen-distinct-list.js [lines=5000000] [outDir=bench/data]
 */
import { once } from "node:events";
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";

const lines = Number(process.argv[2] ?? 5_000_000);
const outDir = process.argv[3] ?? join(import.meta.dirname, "data");
if (!(lines > 0 && lines <= 50_000_000)) throw new Error("lines must be between 1 and 50,000,000");

/** Multiplying by a number prime to `lines` (7919 is odd, not a multiple of 5, and prime) permutes 0 … lines-1. */
const MULTIPLIER = lines % 7919 === 0 ? 7907 : 7919;

mkdirSync(outDir, { recursive: true });
const path = join(outDir, `distinct-${lines}.txt`);
const out = createWriteStream(path);
let text = "";
for (let i = 0; i < lines; i++) {
  const n = 7_400_000_000 + ((i * MULTIPLIER) % lines);
  text += i % 2 ? `+44${n}\n` : `0${n}\n`;
  if (text.length > 1 << 16) {
    if (!out.write(text)) await once(out, "drain");
    text = "";
  }
}
out.end(text);
await once(out, "finish");
console.log(JSON.stringify({ lines, path }));

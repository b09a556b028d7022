#!/usr/bin/env node
/**
 * Generates the preparation benchmark's inputs, deterministically:
 *   bench/data/messy-<n>.csv — a messy GB CRM export (name, phone, notes)
 *   bench/data/messy-<n>.txt — the same phone cells, one per line
 * Usage: node bench/gen-messy-csv.js [rows=500000] [outDir=bench/data]
 *
 * Mix (per row): ~2% duplicates of an earlier number in another format, ~1%
 * invalid, ~1% foreign, ~1% blank, ~0.5% Excel damage, the rest valid GB mobiles
 * (7400/7500/7800 ranges) and London 020 7946 numbers in a dozen spellings.
 */
import { mkdirSync, createWriteStream } from "node:fs";
import { join } from "node:path";
import { once } from "node:events";
import { mulberry32 } from "../dist/sandbox/random.js";

const rows = Number(process.argv[2] ?? 500_000);
const outDir = process.argv[3] ?? join(import.meta.dirname, "data");

const random = mulberry32(20240611);
const pick = (list) => list[Math.floor(random() * list.length)];

const FIRST = ["Alice", "Bob", "Chloë", "David", "Emma", "Farah", "George", "Hana", "Ian", "Jo", "Kwame", "Lena", "Mo", "Nia"];
const LAST = ["Smith", "O'Brien", "Jones", "Patel", "Nguyen", "Williams", "Brown", "Taylor", "Khan", "Evans"];
const NOTES = [
  "",
  "",
  "",
  'call after 5pm, ask for "Bob"',
  "VIP",
  "prefers email",
  "met at expo; follow up",
  "old number?",
  "do not call before 9",
];

/** The n-th distinct GB national significant number (n < 3M): mostly mobiles, one in twenty a London line. */
function gbNumber(n) {
  const k = (n * 7919 + 12345) % 3_000_000;
  if (k % 20 === 0) return "207" + String(k / 20).padStart(7, "0");
  return ["7400", "7500", "7800"][k % 3] + String(Math.floor(k / 3)).padStart(6, "0");
}

/** Writes a national significant number in one of the spellings analysts' exports contain. */
function spell(nsn) {
  const mobile = nsn.startsWith("7");
  const [a, b] = mobile ? [nsn.slice(0, 4), nsn.slice(4)] : [nsn.slice(0, 2), nsn.slice(2)];
  switch (Math.floor(random() * 12)) {
    case 0:
      return `+44 ${a} ${b}`;
    case 1:
      return `0${nsn}`;
    case 2:
      return `0${a} ${b}`;
    case 3:
      return `0044 ${a} ${b}`;
    case 4:
      return `44${nsn}`;
    case 5:
      return `+44 (0)${a} ${b}`;
    case 6:
      return `+44-${a}-${b.slice(0, 3)}-${b.slice(3)}`;
    case 7:
      return `(0${a}) ${b}`;
    case 8:
      return ` +44${nsn} `;
    case 9:
      return `0${a}-${b}`;
    default:
      return `+44${nsn}`;
  }
}

const FOREIGN = ["+1 212 555 0142", "+33 6 12 34 56 78", "+49 151 12345678", "+353 85 123 4567", "+61 412 345 678", "+91 98765 43210"];
const INVALID = ["12345", "n/a", "07400 12345", "+44 7700 900123", "call me", "0000000000", "+44 20 7946 012"];

function phoneCell(i, seen) {
  const r = random();
  if (r < 0.01) return "";
  if (r < 0.02) return pick(INVALID);
  if (r < 0.03) return pick(FOREIGN);
  if (r < 0.035) {
    const nsn = gbNumber(i);
    return pick([`4.4${nsn.slice(0, 4)}E+11`, `44${nsn}.0`, `'+44${nsn}`, `tel:+44${nsn}`, `+44 ${nsn} ext. 12`]);
  }
  if (r < 0.055 && seen.length > 0) return spell(seen[Math.floor(random() * seen.length)]);
  const nsn = gbNumber(i);
  if (seen.length < 50_000) seen.push(nsn);
  else seen[Math.floor(random() * seen.length)] = nsn;
  return spell(nsn);
}

/** Quotes a CSV field when it needs it (RFC 4180). */
function csvField(value) {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

async function write(path, lines) {
  const out = createWriteStream(path);
  for (const line of lines) {
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

mkdirSync(outDir, { recursive: true });
const seen = [];
const phones = [];
for (let i = 0; i < rows; i++) phones.push(phoneCell(i, seen));

function* csvLines() {
  yield "name,phone,notes\r\n";
  for (const phone of phones) {
    const name = random() < 0.3 ? `${pick(LAST)}, ${pick(FIRST)}` : `${pick(FIRST)} ${pick(LAST)}`;
    yield `${csvField(name)},${csvField(phone)},${csvField(pick(NOTES))}\r\n`;
  }
}
function* txtLines() {
  for (const phone of phones) yield `${phone}\n`;
}

await write(join(outDir, `messy-${rows}.csv`), csvLines());
await write(join(outDir, `messy-${rows}.txt`), txtLines());
console.log(JSON.stringify({ rows, csv: join(outDir, `messy-${rows}.csv`), txt: join(outDir, `messy-${rows}.txt`) }));

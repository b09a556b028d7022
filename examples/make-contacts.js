#!/usr/bin/env node
/**
 * Writes examples/contacts.csv: a messy CRM export of 1,200 UK contacts for the
 * demo and the docs, deterministically (same bytes every run).
 *
 * What is in it, on purpose: CRLF line ends; quoted names and notes with commas,
 * quotes and a line break; GB mobiles (7400/7500/7800 ranges) and London
 * 020 7946 0xxx lines written nationally, internationally, with 0044, without the
 * plus, with spaces, dashes and "(0)"; repeats of earlier contacts in another
 * spelling; blank phone cells; a handful of invalid numbers, foreign numbers,
 * Excel damage (scientific notation, a trailing ".0", a leading apostrophe) and
 * extensions; Jersey, Guernsey and Isle of Man numbers (regions sharing +44).
 *
 * Usage: node examples/make-contacts.js [out=examples/contacts.csv]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { rng } from "../bench/rng.js";

const out = process.argv[2] ?? join(import.meta.dirname, "contacts.csv");
const ROWS = 1200;

const random = rng(1200);
const pick = (list) => list[Math.floor(random() * list.length)];

const FIRST = [
  "Olivia",
  "Amelia",
  "Isla",
  "Ava",
  "Mia",
  "Noah",
  "Oliver",
  "George",
  "Arthur",
  "Leo",
  "Priya",
  "Mohammed",
  "Siobhán",
  "Zoë",
  "Rhys",
  "Callum",
];
const LAST = [
  "Smith",
  "Jones",
  "Taylor",
  "Brown",
  "Williams",
  "Wilson",
  "Davies",
  "Evans",
  "Patel",
  "Khan",
  "O'Connor",
  "Murphy",
  "MacDonald",
  "Hughes",
];
const COMPANIES = [
  "Acme Ltd",
  "Brightside Logistics",
  "Harbour & Co",
  "Northwind Traders",
  "Smith, Jones and Partners",
  "Tesco Express",
  "Kent County Council",
  "",
];
const NOTES = [
  "",
  "",
  "",
  "",
  "prefers email",
  "call after 5pm, not before",
  'asked for "Dave"',
  "met at trade show",
  "VIP",
  "old number?",
  "line 1\nline 2",
];

/** The n-th distinct GB national significant number: mostly mobiles, some London lines. */
function gbNumber(n) {
  if (n % 9 === 0) return "207946" + String(n % 1000).padStart(4, "0");
  return ["7400", "7500", "7800"][n % 3] + String(100000 + n * 37).padStart(6, "0");
}

/** A national significant number in one of the spellings a CRM ends up holding. */
function spell(nsn) {
  const mobile = nsn.startsWith("7");
  const a = mobile ? nsn.slice(0, 4) : nsn.slice(0, 2);
  const b = mobile ? nsn.slice(4) : `${nsn.slice(2, 6)} ${nsn.slice(6)}`;
  return pick([
    `0${a} ${b}`,
    `0${nsn}`,
    `+44 ${a} ${b}`,
    `+44${nsn}`,
    `0044 ${a} ${b}`,
    `44${nsn}`,
    `+44 (0)${a} ${b}`,
    `0${a}-${b.replace(" ", "-")}`,
  ]);
}

const SPECIAL = [
  // Regions sharing +44: kept by default, counted per region; --strict-region excludes them.
  "+44 1534 456789",
  "01534 456790",
  "+44 7781 123456",
  "01481 256789",
  "07624 123456",
  // Foreign.
  "+1 212 555 0142",
  "+33 6 12 34 56 78",
  "+49 151 12345678",
  "+353 85 123 4567",
  "+61 412 345 678",
  // Invalid.
  "12345",
  "07400 12345",
  "+44 7700 900123",
  "n/a",
  "ask reception",
  "0000 000000",
  // Excel damage: digits lost to scientific notation, and damage that can be undone.
  "4.47400E+11",
  "4.47500E+11",
  "447400987654.0",
  "'+447500987654",
  "4.47800987654E+11",
  // Extensions, dropped and noted.
  "+44 20 7946 0999 ext. 214",
  "020 7946 0998 x12",
];

const rows = [["id", "name", "company", "phone", "email", "notes"]];
const seen = [];
let special = 0;
for (let id = 1; id <= ROWS; id++) {
  const first = pick(FIRST);
  const last = pick(LAST);
  const name = random() < 0.25 ? `${last}, ${first}` : `${first} ${last}`;
  let phone;
  const r = random();
  if (r < 0.02) phone = "";
  else if (r < 0.04 && special < SPECIAL.length) phone = SPECIAL[special++];
  else if (r < 0.07 && seen.length > 0) phone = spell(pick(seen));
  else {
    const nsn = gbNumber(id);
    seen.push(nsn);
    phone = spell(nsn);
  }
  const email = random() < 0.85 ? `${first}.${last}@example.co.uk`.toLowerCase().replace(/[^a-z.@]/g, "") : "";
  rows.push([String(id), name, pick(COMPANIES), phone, email, pick(NOTES)]);
}
// Whatever the dice left out of the special cases goes at the end, so every case is always present.
for (; special < SPECIAL.length; special++) rows.push([String(rows.length), "Late Entry", "", SPECIAL[special], "", "added by hand"]);

const quote = (value) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
writeFileSync(out, rows.map((row) => row.map(quote).join(",")).join("\r\n") + "\r\n");
console.log(`wrote ${rows.length - 1} rows to ${out}`);

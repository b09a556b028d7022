#!/usr/bin/env node
/**
 * Differential checks of preparation:
 * 1. the fast path (dist/prepare/digit-parser.js) against libphonenumber-js itself, over
 *    millions of generated numbers across every country (bench/gen-differential-cases.js);
 * 2. prepareList (dist/prepare) against the plain reference of the preparation rules
 *    (test/reference/number-reference.js), row by row, on the corpus of every country's
 *    example number written every way (test/reference/number-corpus.js), `rounds` times
 *    over with the rows shuffled, for default / --require-country-code / --strict-region.
 * Prints a JSON summary; exits with status 1 on any disagreement.
 *
 * Usage: node bench/prepare-differential.js [cases=3000000] [seed=1] [rounds=5]
 * Env:   BULKCHECK_DIST  compiled library (default ../dist), e.g. /tmp/prep-dist
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parse } from "csv-parse/sync";
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { differentialCases } from "./gen-differential-cases.js";
import { CORPUS_COUNTRIES, corpusCells, corpusCellsWithoutCountry } from "../test/reference/number-corpus.js";
import { referenceList } from "../test/reference/number-reference.js";

const dist = resolve(process.env.BULKCHECK_DIST ?? join(import.meta.dirname, "..", "dist"));
const { parseDigits } = await import(pathToFileURL(join(dist, "prepare", "digit-parser.js")).href);
const { prepareList } = await import(pathToFileURL(join(dist, "prepare", "index.js")).href);
const { mulberry32 } = await import(pathToFileURL(join(dist, "sandbox", "random.js")).href);
const count = Number(process.argv[2] ?? 3_000_000);
const seed = Number(process.argv[3] ?? 1);
const rounds = Number(process.argv[4] ?? 5);

const figures = { cases: 0, library_valid: 0, library_undefined: 0, countries: new Set(), mismatches: 0, library_ms: 0, fast_path_ms: 0 };
const examples = [];
for (const c of differentialCases(count, mulberry32(seed))) {
  let started = performance.now();
  const phone = parsePhoneNumberFromString(c.input, { defaultCountry: c.defaultCountry, extract: false });
  const theirs = phone && {
    valid: phone.isValid(),
    callingCode: phone.countryCallingCode,
    nationalNumber: phone.nationalNumber,
    country: phone.country,
  };
  figures.library_ms += performance.now() - started;
  started = performance.now();
  const ours = parseDigits(c.input, c.defaultCountry);
  figures.fast_path_ms += performance.now() - started;
  figures.cases++;
  if (!theirs) figures.library_undefined++;
  else if (theirs.valid) {
    figures.library_valid++;
    if (theirs.country) figures.countries.add(theirs.country);
  }
  if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
    figures.mismatches++;
    if (examples.length < 20) examples.push({ ...c, ours, theirs });
  }
}

/** prepareList's class of each row (from its rejects file) and kept identifiers in order, against the reference. */
async function compareList(country, cells, mode, dir) {
  const path = join(dir, "list.txt");
  writeFileSync(path, ["phone", ...cells].join("\n") + "\n");
  const rejectsPath = join(dir, "rejects.csv");
  const result = await prepareList({ source: path, ...(country ? { country } : {}), workers: 0, outputDir: dir, rejectsPath, ...mode });
  const expected = referenceList(cells, { ...(country ? { country } : {}), ...mode });
  const rejected = new Map(
    parse(readFileSync(rejectsPath, "utf8"))
      .slice(1)
      .map(([line, , cls]) => [Number(line), cls]),
  );
  const uploaded = readFileSync(result.chunks[0].path, "utf8").split("\n");
  const problems = [];
  let k = 0;
  expected.rows.forEach((want, i) => {
    const got = rejected.get(i + 2) ?? "kept";
    const identifier = got === "kept" ? uploaded[k++] : undefined;
    if (got !== want.class || (got === "kept" && identifier !== want.identifier)) {
      problems.push({ country, cell: cells[i], validate: [got, identifier], reference: [want.class, want.identifier] });
    }
  });
  return { rows: cells.length, problems, ambiguous: expected.ambiguous };
}

const MODES = { default: {}, require_country_code: { requireCountryCode: true }, strict_region: { strictRegion: true } };
const rules = { countries: CORPUS_COUNTRIES.length, rounds, rows: 0, ambiguous_rows: 0, mismatches: 0, ms: 0, examples: [] };
const random = mulberry32(seed);
const shuffled = (cells) =>
  cells
    .map((cell) => [random(), cell])
    .sort((a, b) => a[0] - b[0])
    .map(([, cell]) => cell);
const dir = mkdtempSync(join(tmpdir(), "bulkcheck-differential-"));
try {
  const started = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (const mode of Object.values(MODES)) {
      const lists = [...CORPUS_COUNTRIES.map((country, i) => [country, corpusCells(country, i)]), [undefined, corpusCellsWithoutCountry()]];
      for (const [country, cells] of lists) {
        const outcome = await compareList(country, round === 0 ? cells : shuffled(cells), mode, dir);
        rules.rows += outcome.rows;
        rules.ambiguous_rows += outcome.ambiguous;
        rules.mismatches += outcome.problems.length;
        rules.examples.push(...outcome.problems.slice(0, Math.max(0, 20 - rules.examples.length)));
      }
    }
  }
  rules.ms = Math.round(performance.now() - started);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  JSON.stringify(
    {
      ...figures,
      countries: figures.countries.size,
      library_ms: Math.round(figures.library_ms),
      fast_path_ms: Math.round(figures.fast_path_ms),
      examples,
      rules,
    },
    null,
    2,
  ),
);
process.exitCode = figures.mismatches === 0 && rules.mismatches === 0 ? 0 : 1;

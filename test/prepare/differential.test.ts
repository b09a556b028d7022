import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CountryCode } from "libphonenumber-js/max";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { prepareList, type PrepareOptions } from "../../src/prepare/index.js";
import { CORPUS_COUNTRIES, corpusCells, corpusCellsWithoutCountry } from "../reference/number-corpus.js";
import { referenceList } from "../reference/number-reference.js";
import { listFile, tempDir } from "./helpers.js";

type Mode = Pick<PrepareOptions, "requireCountryCode" | "strictRegion">;
const MODES: Record<string, Mode> = {
  default: {},
  "--require-country-code": { requireCountryCode: true },
  "--strict-region": { strictRegion: true },
};

interface Comparison {
  problems: string[];
  ambiguous: number;
  digitsAs: string;
  spreadsheetExpanded: number;
}

/**
 * Prepares `cells` (a plain list under a `phone` header) and holds every row to the
 * reference: its class from the rejects file (kept rows are absent there), the kept
 * identifiers in upload order, and the votes and ambiguous rows of the summary.
 * Returns one line per disagreement, naming the row.
 */
async function compare(country: string | undefined, cells: readonly string[], mode: Mode): Promise<Comparison> {
  const path = await listFile("list.txt", ["phone", ...cells].join("\n") + "\n");
  const dir = await tempDir();
  const rejectsPath = join(dir, "rejects.csv");
  const result = await prepareList({
    source: path,
    ...(country === undefined ? {} : { country: country as CountryCode }),
    workers: 0,
    outputDir: dir,
    rejectsPath,
    ...mode,
  });
  const expected = referenceList(cells, { ...(country === undefined ? {} : { country }), ...mode });
  const rejects: string[][] = parse(await readFile(rejectsPath, "utf8"));
  const rejected = new Map(rejects.slice(1).map(([line, , cls]) => [Number(line), cls]));
  const uploaded = (await readFile(result.chunks[0]!.path, "utf8")).split("\n").filter((line) => line !== "");
  const problems: string[] = [];
  const row = (i: number) => `${country ?? "no country"} line ${i + 2} ${JSON.stringify(cells[i])}`;
  let keptIndex = 0;
  expected.rows.forEach((want, i) => {
    const got = rejected.get(i + 2) ?? "kept";
    if (got !== want.class) problems.push(`${row(i)}: validate says ${got}, the reference ${want.class} ${want.identifier ?? ""}`);
    if (want.class === "kept" && got === "kept" && uploaded[keptIndex++] !== want.identifier) {
      problems.push(`${row(i)}: validate uploads ${uploaded[keptIndex - 1]}, the reference ${want.identifier}`);
    }
  });
  const { ambiguous } = result.summary;
  if (ambiguous.total !== expected.ambiguous || JSON.stringify(ambiguous.votes) !== JSON.stringify(expected.votes)) {
    problems.push(
      `${country}: summary ${JSON.stringify(ambiguous)}, reference ${expected.ambiguous} ambiguous, ${JSON.stringify(expected.votes)}`,
    );
  }
  if (result.settings.digitsAs !== expected.digitsAs)
    problems.push(`${country}: read as ${result.settings.digitsAs}, not ${expected.digitsAs}`);
  return { problems, ambiguous: ambiguous.total, digitsAs: expected.digitsAs, spreadsheetExpanded: result.summary.spreadsheet_expanded };
}

describe("validate against a plain reference of the preparation rules", () => {
  it.each(Object.entries(MODES))(
    `agrees row by row on lists written every way, for ${CORPUS_COUNTRIES.length} countries (%s)`,
    async (_mode, mode) => {
      const problems: string[] = [];
      let ambiguous = 0;
      let spreadsheetExpanded = 0;
      const conventions = new Set<string>();
      for (const [index, country] of CORPUS_COUNTRIES.entries()) {
        const outcome = await compare(country, corpusCells(country, index), mode);
        problems.push(...outcome.problems);
        ambiguous += outcome.ambiguous;
        spreadsheetExpanded += outcome.spreadsheetExpanded;
        if (outcome.ambiguous > 0) conventions.add(outcome.digitsAs);
      }
      problems.push(...(await compare(undefined, corpusCellsWithoutCountry(), mode)).problems);
      expect(problems).toEqual([]);
      // The corpus must reach the rules it is there to check.
      expect(CORPUS_COUNTRIES.length).toBeGreaterThanOrEqual(30);
      expect(ambiguous).toBeGreaterThan(0);
      expect([...conventions].sort()).toEqual(["international", "national"]);
      expect(spreadsheetExpanded).toBeGreaterThan(0);
    },
    60_000,
  );
});

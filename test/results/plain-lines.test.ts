import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ServiceType } from "../../src/spec/products.js";
import { ResultFileError } from "../../src/results/errors.js";
import { rendererFor } from "../../src/results/render.js";
import { resultTable, type SourceSummary } from "../../src/results/read-results.js";
import { RowTally, type Tally } from "../../src/results/tally.js";
import { TempFiles, tempPathFor } from "../../src/results/temp-files.js";
import { writeResults } from "../../src/results/write-results.js";
import { DEFAULT_ZIP_LIMITS } from "../../src/results/unzip.js";
import { mulberry32 } from "../../src/sandbox/random.js";
import { collector, concatText, makeTempDir, sourceOf, zipOf } from "./helpers.js";

/**
 * The download's fast case (plain lines copied through, see copyPlainLines) must write
 * exactly what the general path (every record read and arranged, every row rendered)
 * writes, count exactly the same, and fail exactly alike. Each test runs both on the
 * same bytes and compares; the general path is `resultTable`, the fast case
 * `writeResults` with CSV output.
 */

let dir: string;
let remove: () => Promise<void>;
beforeEach(async () => ({ dir, remove } = await makeTempDir()));
afterEach(() => remove());

type Body = string | Buffer;
type Outcome = { text: string; tally: Tally; sources: Omit<SourceSummary, "copied" | "signal">[] } | { error: string; message?: string };

function failure(error: unknown): Outcome {
  if (!(error instanceof ResultFileError)) return { error: String(error) };
  return { error: error.code, message: error.message };
}

/** What both paths fill in alike (the general path here tallies outside the reader, so its sources have no counts of their own). */
function withoutCopied(sources: readonly SourceSummary[]): Omit<SourceSummary, "copied" | "signal">[] {
  return sources.map(({ copied: _copied, signal: _signal, ...rest }) => rest);
}

/** The reference: read every record, render every row, and tally row by row with RowTally itself. */
async function generalPath(bodies: readonly Body[], serviceType: ServiceType, chunkSize: number): Promise<Outcome> {
  const tally = new RowTally(serviceType);
  const sources: SourceSummary[] = [];
  const table = resultTable(
    bodies.map((body) => ({ open: sourceOf(body, chunkSize) })),
    { ...DEFAULT_ZIP_LIMITS, serviceType, temps: new TempFiles(), spoolPath: () => tempPathFor(join(dir, "general"), ".zip"), sources },
  );
  async function* tallied(rows: AsyncIterable<readonly string[]>): AsyncGenerator<readonly string[]> {
    let header = true;
    for await (const row of rows) {
      if (header) header = false;
      else tally.add(row);
      yield row;
    }
  }
  try {
    const text = await concatText(rendererFor({ format: "csv" })(tallied(table)));
    return { text, tally: tally.result(), sources: withoutCopied(sources) };
  } catch (error) {
    return failure(error);
  }
}

async function fastPath(
  bodies: readonly Body[],
  serviceType: ServiceType,
  chunkSize: number,
): Promise<{ outcome: Outcome; copied: boolean[] }> {
  const out = collector();
  try {
    const summary = await writeResults(
      bodies.map((body) => sourceOf(body, chunkSize)),
      { stream: out.stream, end: true },
      { serviceType, tempDir: dir },
    );
    const { rows, signal, carrier } = summary;
    const outcome = { text: await out.text(), tally: { rows, signal, carrier }, sources: withoutCopied(summary.sources) };
    return { outcome, copied: summary.sources.map((source) => source.copied) };
  } catch (error) {
    return { outcome: failure(error), copied: [] };
  }
}

/**
 * Runs both paths on every chunking given and expects the same outcome; returns the fast
 * path's for the first chunking. Small chunks arrive as a line at a time, so every line
 * after the first record is a piece the fast case may take.
 */
async function expectSameOutcome(bodies: readonly Body[], serviceType: ServiceType, chunkSizes = [3, 1, 65_536]) {
  const outcomes: Array<Awaited<ReturnType<typeof fastPath>>> = [];
  for (const chunkSize of chunkSizes) {
    const expected = await generalPath(bodies, serviceType, chunkSize);
    outcomes.push(await fastPath(bodies, serviceType, chunkSize));
    expect(outcomes.at(-1)!.outcome, `chunks of ${chunkSize} bytes`).toEqual(expected);
  }
  return outcomes[0]!;
}

const SIGNAL: ServiceType = "number_validation_batch";
const CARRIER: ServiceType = "carrier_batch";
const BOM = "\uFEFF";

// [name, product, body, whether the fast case takes some of it in 3-byte chunks]
const CASES: readonly (readonly [string, ServiceType, Body, boolean])[] = [
  ["a headered result", SIGNAL, "identifier,activated\n4915112345678,true\n4915112345679,false\n", true],
  ["a headerless result", SIGNAL, "4915112345678,true\n4915112345679,false\n", true],
  ["CRLF line ends", SIGNAL, "identifier,activated\r\n4915112345678,true\r\n4915112345679,false\r\n", true],
  ["a BOM", SIGNAL, `${BOM}identifier,activated\n4915112345678,true\n`, true],
  ["a BOM, CRLF and a headerless file", SIGNAL, `${BOM}4915112345678,true\r\n4915112345679,false\r\n`, true],
  ["a quoted header", SIGNAL, '"identifier","activated"\r\n4915112345678,true\r\n', true],
  ["quoted fields", SIGNAL, 'identifier,activated\n"4915112345678",true\n4915112345679,"false"\n"4915112345680","tr""ue"\n', false],
  ["blank lines", SIGNAL, "identifier,activated\n\n4915112345678,true\n\n\n4915112345679,false\n\n", true],
  ["blank CRLF lines", SIGNAL, "identifier,activated\r\n\r\n4915112345678,true\r\n\r\n", true],
  ["no line end after the last row", SIGNAL, "identifier,activated\n4915112345678,true", false],
  ["a short row (padded)", SIGNAL, "identifier,activated\n4915112345678\n4915112345679,\n", true],
  ["a row wider than the first", SIGNAL, "identifier,activated\n4915112345678,true\n4915112345679,false,late\n", true],
  ["a quoted field running over lines", SIGNAL, 'identifier,activated\n4915112345678,"tr\nue"\n4915112345679,false\n', true],
  ["a quoted field running over CRLF lines", SIGNAL, 'identifier,activated\r\n4915112345678,"tr\r\nue"\r\n4915112345679,false\r\n', true],
  ["a carriage return inside an LF file", SIGNAL, "identifier,activated\n4915112345678,tr\rue\n4915112345679,false\r\n", true],
  ["a bare line feed inside a CRLF file", SIGNAL, "identifier,activated\r\n4915112345678,tr\nue\r\n\n4915112345679,false\r\n", true],
  ["a stray quote inside an unquoted field", SIGNAL, 'identifier,activated\n4915112345678,tr"ue\n4915112345679,false\n', true],
  ["text after a closing quote", SIGNAL, 'identifier,activated\n4915112345678,"tr"ue\n4915112345679,false\n', true],
  ["a quote never closed", SIGNAL, 'identifier,activated\n4915112345678,"true\n4915112345679,false\n', true],
  ["a lone carriage return at the very end", SIGNAL, "identifier,activated\r\n4915112345678,true\r", false],
  ["a BOM inside the file", SIGNAL, `identifier,activated\n${BOM}4915112345678,true\n`, true],
  [
    "multibyte text",
    CARRIER,
    "identifier,carrier,underlying_carrier,number_type,country_code,region,city\n4915112345678,Télékom,Télékom,mobile,DE,Bayern,München\n",
    true,
  ],
  [
    "invalid UTF-8",
    SIGNAL,
    Buffer.concat([Buffer.from("identifier,activated\n4915112345678,tr"), Buffer.from([0xc3, 0x28, 0xe2, 0x82]), Buffer.from(",x\n")]),
    true,
  ],
  [
    "invalid UTF-8 at the very end",
    SIGNAL,
    Buffer.concat([Buffer.from("identifier,activated\n4915112345678,true"), Buffer.from([0xe2, 0x82])]),
    false,
  ],
  [
    "carrier rows with commas and quotes in names",
    CARRIER,
    'identifier,carrier,underlying_carrier,number_type,country_code,region,city\n4915112345678,"AT&T, Inc.","Say ""hi""",mobile,US,"New York, NY",\n4915112345679,,,,,,\n',
    true,
  ],
  [
    "cells that would start a formula (neutralised)",
    CARRIER,
    "identifier,carrier,underlying_carrier,number_type,country_code,region,city\n4915112345678,=1+1,+cmd|' /C calc'!A0,-,@x,\tx,\n4915112345679,EE,EE,mobile,DE,,\n",
    true,
  ],
  ["a header name that would start a formula", SIGNAL, "identifier,activated,=note\n4915112345678,true,=1\n", true],
  ["an empty result", SIGNAL, "", false],
  ["only a header without a line end", SIGNAL, "identifier,activated", false],
  ["only a header", SIGNAL, "identifier,activated\n", false],
  ["leading blank lines", SIGNAL, "\nidentifier,activated\n4915112345678,true\n", true],
  ["a header quoted over two lines", SIGNAL, '"ident\nifier",activated\n4915112345678,true\n', true],
  [
    "UTF-16LE after its BOM",
    SIGNAL,
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("identifier,activated\n4915112345678,true\n", "utf16le")]),
    true,
  ],
  ["columns out of order", SIGNAL, "activated,identifier\ntrue,4915112345678\n", false],
  ["an extra column (kept, in order)", SIGNAL, "identifier,activated,score\n4915112345678,true,9\n", true],
  ["a headerless file with a missing column", CARRIER, "4915112345678,Telekom\n", false],
  ["a header without identifier", SIGNAL, "phone,activated\n4915112345678,true\n", false],
];

describe("the download's fast case writes what the general path writes", () => {
  it.each(CASES)("for %s", async (_name, product, body, copied) => {
    const fast = await expectSameOutcome([body], product);
    if ("text" in fast.outcome) expect(fast.copied).toEqual([copied]);
  });

  it.each(CASES)("for %s, zipped", async (_name, product, body) => {
    await expectSameOutcome([await zipOf({ "result.csv": body })], product, [7, 65_536]);
  });

  it("for several sources, some copied and some parsed, under one header", async () => {
    const bodies = ["identifier,activated\n4915112345678,true\n", "activated,identifier\nfalse,4915112345679\n", "4915112345680,true\r\n"];
    const fast = await expectSameOutcome(bodies, SIGNAL);
    expect(fast.copied).toEqual([true, false, false]);
  });

  it("for a second source whose extra column the first lacked", async () => {
    await expectSameOutcome(["identifier,activated\n4915112345678,true\n", "identifier,activated,score\n4915112345679,false,1\n"], SIGNAL);
  });

  it("for lines longer than a read", async () => {
    const long = "x".repeat(70_000);
    await expectSameOutcome([`identifier,activated\n4915112345678,${long}\n`, `${long},true\n`], SIGNAL, [4096, 65_536]);
  });

  it("for a repeated row between thousands of distinct ones", async () => {
    let body = "identifier,carrier,underlying_carrier,number_type,country_code,region,city\n";
    for (let i = 0; i < 9_000; i += 1) body += `49151${10_000_000 + i},${i % 2 ? "EE,EE,mobile" : `c${i},x,voip`},GB,,\n`;
    await expectSameOutcome([body], CARRIER, [65_536]);
  });

  it("for thousands of rows, parsed and copied, with values past the tally's distinct-value cap", async () => {
    let body = "identifier,carrier,underlying_carrier,number_type,country_code,region,city\n";
    for (let i = 0; i < 12_000; i += 1)
      body += `49151${10_000_000 + i},c${i % 10_500},x,${i % 3 || i > 300 ? "mobile" : '"fixed, line"'},DE,,\n`;
    const fast = await expectSameOutcome([body], CARRIER, [65_536]);
    expect(fast.copied).toEqual([true]);
  });
});

const TOKENS: readonly Body[] = [
  "4915112345678",
  "true",
  "false",
  "mobile",
  ",",
  ",",
  ",",
  '"',
  '"',
  '""',
  '"a,b"',
  '"x""y"',
  "\r",
  "\n",
  "\r\n",
  " ",
  "é",
  BOM,
  "",
  Buffer.from([0xc3]),
  Buffer.from([0xe2, 0x82]),
];

/** Random bytes that begin like a result the fast case accepts, then go anywhere. */
function randomBody(next: () => number, product: ServiceType): Buffer {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const columns = product === CARRIER ? 7 : 2;
  const eol = pick(["\n", "\r\n"]);
  const first = pick([
    product === CARRIER ? "identifier,carrier,underlying_carrier,number_type,country_code,region,city" : "identifier,activated",
    product === CARRIER ? '"identifier","carrier",underlying_carrier,number_type,country_code,region,city' : '"identifier","activated"',
    ["4915112345678", ...Array.from({ length: columns - 1 }, () => pick(["true", "x", ""]))].join(","),
  ]);
  const parts: Body[] = [pick(["", BOM]), first, eol];
  const lines = Math.floor(next() * 10);
  for (let line = 0; line < lines; line += 1) {
    const tokens = Math.floor(next() * 8);
    for (let i = 0; i < tokens; i += 1) parts.push(pick(TOKENS));
    if (next() < 0.9) parts.push(next() < 0.9 ? eol : pick(["\n", "\r\n", "\r"]));
  }
  return Buffer.concat(parts.map((part) => Buffer.from(part)));
}

describe("the download's fast case agrees with the general path on random text", () => {
  it.each([SIGNAL, CARRIER])(
    "for %s",
    async (product) => {
      const cases = 1500;
      for (let seed = 1; seed <= cases; seed += 1) {
        const next = mulberry32(seed);
        const body = randomBody(next, product);
        const chunkSize = next() < 0.5 ? 1 + Math.floor(next() * 8) : 65_536;
        const expected = await generalPath([body], product, chunkSize);
        const { outcome } = await fastPath([body], product, chunkSize);
        expect(outcome, `seed ${seed}: ${JSON.stringify(body.toString("latin1"))}`).toEqual(expected);
      }
    },
    60_000,
  );
});

// Benchmark of result handling: writeResults on a 1,000,000-row carrier result, as a
// plain CSV and as a zip, each run in its own process so peak RSS is its own.
//
//   npx tsc -p tsconfig.build.json --outDir /tmp/res-dist
//   BULKCHECK_DIST=/tmp/res-dist node bench/results-bench.js [rows]
//
// Prints one JSON object: per case the input size, seconds, MB/s of CSV processed
// and peak RSS (MB) of that process. `csvParseOnly` is csv-parse alone on the same
// file, the floor writeResults is measured against. BULKCHECK_DIST defaults to ../dist.
import { execFile } from "node:child_process";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import yazl from "yazl";

const MB = 1024 * 1024;
const dist = process.env.BULKCHECK_DIST ? resolve(process.env.BULKCHECK_DIST) : fileURLToPath(new URL("../dist", import.meta.url));

const CARRIERS = [
  ["Telekom", "Telekom", "mobile", "DE", "Berlin", "Berlin"],
  ["Vodafone", "Vodafone", "mobile", "DE", "Bavaria", "Munich"],
  ["O2", "Telefonica", "mobile", "DE", "Hamburg", "Hamburg"],
  ["1&1", "Telefonica", "mobile", "DE", "", ""],
  ["Telekom", "Telekom", "fixed line", "DE", "Hesse", "Frankfurt am Main"],
  ["", "", "unknown", "DE", "", ""],
];

/** Deterministic rows, written with backpressure so generation itself stays flat. */
async function* carrierCsv(rows) {
  yield "identifier,carrier,underlying_carrier,number_type,country_code,region,city\n";
  let seed = 42;
  let chunk = "";
  for (let i = 0; i < rows; i += 1) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const fields = CARRIERS[seed % CARRIERS.length];
    const quotedCity = fields[5].includes(" ") ? `"${fields[5]}"` : fields[5];
    chunk += `49151${String(10_000_000 + i)},${fields.slice(0, 5).join(",")},${quotedCity}\n`;
    if (chunk.length > 64 * 1024) {
      yield chunk;
      chunk = "";
    }
  }
  yield chunk;
}

async function zipFile(csvPath, zipPath) {
  const zip = new yazl.ZipFile();
  zip.addReadStream(createReadStream(csvPath), "result.csv");
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath));
}

/** The floor: csv-parse alone reading the CSV, with the options writeResults uses. */
async function parseOnly(input) {
  const { parse } = await import("csv-parse");
  let rows = 0;
  const parser = createReadStream(input).pipe(parse({ bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true }));
  for await (const record of parser) rows += record.length > 0 ? 1 : 0;
  return { rows: rows - 1 };
}

async function writeOnce(input, output) {
  const { writeResults } = await import(pathToFileURL(join(dist, "results", "write-results.js")).href);
  const summary = await writeResults(
    [async () => createReadStream(input)],
    { path: output, force: true },
    {
      serviceType: "carrier_batch",
      expectedRows: Number(process.env.BENCH_ROWS),
    },
  );
  return {
    rows: summary.rows,
    mismatches: summary.mismatches.length,
    container: summary.sources[0].container,
    outputMB: +(summary.bytes / MB).toFixed(1),
  };
}

/** Child: run one case and report. */
async function runCase(name, input, output, csvBytes) {
  const started = performance.now();
  const result = name === "csvParseOnly" ? await parseOnly(input) : await writeOnce(input, output);
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(
    JSON.stringify({
      ...result,
      inputMB: +((await stat(input)).size / MB).toFixed(1),
      seconds: +seconds.toFixed(2),
      csvMBperSecond: +(csvBytes / MB / seconds).toFixed(1),
      peakRssMB: +(process.resourceUsage().maxRSS / 1024).toFixed(1),
    }),
  );
}

async function main() {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const dir = await mkdtemp(join(tmpdir(), "bulkcheck-bench-"));
  try {
    const csvPath = join(dir, "result.csv");
    const zipPath = join(dir, "result.zip");
    await pipeline(carrierCsv(rows), createWriteStream(csvPath));
    await zipFile(csvPath, zipPath);
    const csvBytes = (await stat(csvPath)).size;
    const cases = {};
    for (const [name, input] of [
      ["csvParseOnly", csvPath],
      ["csv", csvPath],
      ["zip", zipPath],
    ]) {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [fileURLToPath(import.meta.url), "--case", name, input, join(dir, `out-${name}.csv`), String(csvBytes)],
        { env: { ...process.env, BENCH_ROWS: String(rows) } },
      );
      cases[name] = JSON.parse(stdout);
    }
    process.stdout.write(`${JSON.stringify({ node: process.version, dist, rows, csvMB: +(csvBytes / MB).toFixed(1), cases }, null, 2)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--case") {
  await runCase(process.argv[3], process.argv[4], process.argv[5], Number(process.argv[6]));
} else {
  await main();
}

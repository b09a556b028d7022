#!/usr/bin/env node
// `bulkcheck validate`, the command a user runs, each run a child process measured with
// ./measure.js (wall time, peak RSS):
// - the 500,000-row messy CSV (bench/gen-messy-csv.js) and its .txt, against the loop an
//   analyst would write in Python with Google's phonenumbers (bench/validate-reference.py,
//   Debian's python3-phonenumbers at /usr/bin/python3), run on the same CSV in the same
//   run; the kept sets are compared. Targets: ≥ 10× faster, peak RSS ≤ 300 MB.
// - scale: lists of 500,000 and 5,000,000 distinct numbers (bench/gen-distinct-list.js).
//   Targets: peak RSS ≤ 400 MB at 5 M, and time ≤ 12× the 500,000-line list's.
// Prints one JSON object.   node bench/validate-bench.js [runs=3]
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { measure, median } from "./measure.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const BIN = join(here, "..", "bin", "bulkcheck.js");
const PYTHON = "/usr/bin/python3";
const runs = Number(process.argv[2] ?? 3);

function data(generator, name, size) {
  const path = join(here, "data", name);
  if (!existsSync(path)) execFileSync(process.execPath, [join(here, generator), String(size)], { stdio: "ignore" });
  return path;
}

/** `runs` validate runs of `file` writing the kept list to `out`: median wall, highest peak RSS. */
async function validate(file, out = join(dir, "upload.txt")) {
  const all = [];
  for (let i = 0; i < runs; i++) {
    const run = await measure(process.execPath, [BIN, "validate", file, "--country", "GB", "-o", out, "--force", "--quiet"]);
    if (run.code !== 0) throw new Error(`validate ${file} failed: ${run.stderr.slice(0, 300)}`);
    all.push(run);
  }
  return {
    wall_s: Number((median(all.map((run) => run.wallMs)) / 1000).toFixed(2)),
    peak_rss_mb: Math.max(...all.map((run) => run.peakRssMb)),
  };
}

/**
 * The two kept lists as sets: sizes, and what only one of them holds (a few examples).
 * `only_bulkcheck_as_excel_float` counts the identifiers only bulkcheck kept that the
 * source spells as a spreadsheet's float (`447400123456.0`), which bulkcheck cleans.
 */
function compareKept(ours, theirs, source) {
  const read = (path) => new Set(readFileSync(path, "utf8").split("\n").filter(Boolean));
  const [a, b] = [read(ours), read(theirs)];
  const only = (x, y) => [...x].filter((id) => !y.has(id));
  const [onlyOurs, onlyTheirs] = [only(a, b), only(b, a)];
  const floats = new Set([...readFileSync(source, "utf8").matchAll(/(\d+)\.0(?=[,\r\n])/g)].map((match) => match[1]));
  return {
    bulkcheck: a.size,
    python: b.size,
    identical: onlyOurs.length === 0 && onlyTheirs.length === 0,
    only_bulkcheck: onlyOurs.length,
    only_bulkcheck_as_excel_float: onlyOurs.filter((id) => floats.has(id)).length,
    only_python: onlyTheirs.length,
    examples_only_bulkcheck: onlyOurs.slice(0, 3),
    examples_only_python: onlyTheirs.slice(0, 3),
  };
}

const dir = mkdtempSync(join(tmpdir(), "bulkcheck-validate-bench-"));
try {
  const csv = data("gen-messy-csv.js", "messy-500000.csv", 500_000);
  const txt = data("gen-messy-csv.js", "messy-500000.txt", 500_000);
  const ours = join(dir, "bulkcheck.txt");
  const theirs = join(dir, "python.txt");
  const messy = await validate(csv, ours);
  const python = existsSync(PYTHON) ? await measure(PYTHON, [join(here, "validate-reference.py"), csv, "1", "GB", theirs]) : undefined;
  if (python && python.code !== 0)
    throw new Error(`the Python reference failed (is python3-phonenumbers installed?): ${python.stderr.slice(0, 300)}`);
  const small = await validate(data("gen-distinct-list.js", "distinct-500000.txt", 500_000));
  const large = await validate(data("gen-distinct-list.js", "distinct-5000000.txt", 5_000_000));
  console.log(
    JSON.stringify(
      {
        name: "validate",
        messy_csv: {
          rows: 500_000,
          bulkcheck: messy,
          python: python && { wall_s: Number((python.wallMs / 1000).toFixed(2)), peak_rss_mb: python.peakRssMb },
          speedup: python && Number((python.wallMs / 1000 / messy.wall_s).toFixed(1)),
          kept: python && compareKept(ours, theirs, csv),
        },
        messy_txt: { rows: 500_000, bulkcheck: await validate(txt) },
        scale: { lines_500k: small, lines_5m: large, time_ratio: Number((large.wall_s / small.wall_s).toFixed(1)) },
        targets: { speedup: 10, messy_peak_rss_mb: 300, scale_peak_rss_mb: 400, scale_time_ratio: 12 },
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// Excel output: a 1,000,000-row result fetched from a local sandbox by
// `bulkcheck download ID -o FILE.xlsx`, for a signal product and the carrier product, beside
// the same download as CSV (the reference). Target (issue 13): streamed, so peak RSS stays
// flat in the row count: the 1M-row figure is compared with a 100k-row one.
//
//   npm run build && node bench/xlsx-bench.js [rows] [runs]
//
// Figures (median of `runs` runs): whole_s is the wall time of the whole command, start to
// exit; peak_rss_mb is GNU time's %M (or /proc VmHWM polling), from ./measure.js; output_mb
// is the file written. Each workbook's row count is checked by reading its sheet's last row
// reference (the XML is not parsed: a 1M-row sheet is what a reader would need memory for).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { sandboxOptions, submitAndWait, writeList } from "./download-bench.js";
import { measure, median } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));
const dist = new URL("../dist/", import.meta.url);
const PRODUCTS = ["number_validation_batch", "carrier_batch"];
const MB = 1024 * 1024;

async function downloadOnce(sandbox, id, dir, out) {
  rmSync(out, { force: true });
  const env = {
    ...process.env,
    BULKCHECK_BASE_URL: sandbox.url,
    BULKCHECK_API_KEY: sandbox.apiKey,
    BULKCHECK_CONFIG_DIR: join(dir, "config"),
  };
  const run = await measure(process.execPath, [BIN, "download", id, "-o", out], { env });
  if (run.code !== 0) throw new Error(`bulkcheck download failed (${run.code}): ${run.stderr.slice(0, 500)}`);
  return { wallMs: run.wallMs, rss: run.peakRssMb };
}

/** The number of the sheet's last row, read from the end of sheet1.xml with unzip (no XML parse). */
function lastRow(xlsx) {
  try {
    const tail = execFileSync("sh", ["-c", 'unzip -p "$0" xl/worksheets/sheet1.xml | tail -c 4096', xlsx], { encoding: "utf8" });
    const rows = [...tail.matchAll(/<row r="(\d+)"/g)];
    return rows.length > 0 ? Number(rows.at(-1)[1]) : undefined;
  } catch {
    return undefined; // no unzip on this machine
  }
}

async function measureCase(sandbox, id, dir, runs) {
  // The sandbox builds a result file on its first download; build it before timing anything.
  await downloadOnce(sandbox, id, dir, join(dir, "warm-up.csv"));
  const figures = {};
  for (const format of ["csv", "xlsx"]) {
    const out = join(dir, `out.${format}`);
    const list = [];
    for (let i = 0; i < runs; i++) list.push(await downloadOnce(sandbox, id, dir, out));
    figures[format] = {
      whole_s: Number((median(list.map((r) => r.wallMs)) / 1000).toFixed(2)),
      peak_rss_mb: median(list.map((r) => r.rss)),
      output_mb: Number((statSync(out).size / MB).toFixed(1)),
      ...(format === "xlsx" ? { last_sheet_row: lastRow(out) } : {}),
    };
  }
  figures.xlsx_over_csv_time = Number((figures.xlsx.whole_s / figures.csv.whole_s).toFixed(2));
  return figures;
}

export async function run({ rows = 1_000_000, smallRows = 100_000, runs = 3, products = PRODUCTS } = {}) {
  const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-xlsx-bench-"));
  const cases = {};
  try {
    for (const count of [smallRows, rows]) {
      const list = join(dir, `list-${count}.txt`);
      writeList(list, count);
      const sandbox = await startSandbox(sandboxOptions(list, count));
      try {
        for (const product of products) {
          const task = await submitAndWait(sandbox, product, list);
          cases[`${product}/${count}`] = { rows: task.success_cnt, ...(await measureCase(sandbox, task.id, dir, runs)) };
        }
      } finally {
        await sandbox.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    name: "xlsx",
    node: process.version,
    machine: { cpus: availableParallelism(), model: cpus()[0]?.model, load_average_at_end: loadavg().map((n) => Number(n.toFixed(1))) },
    rows,
    small_rows: smallRows,
    runs,
    cases,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [rows, runs] = process.argv.slice(2).map(Number);
  console.log(JSON.stringify(await run({ rows: rows || undefined, runs: runs || undefined }), null, 2));
}

// Download: a 1,000,000-row result fetched from a local sandbox by `bulkcheck download ID -o FILE`
// and by `curl -o FILE URL` (the reference), for a signal product and the carrier product, with
// the sandbox serving CSV and then zip results.
// Target (issue 10): for the carrier product's CSV result, ≥ 50 MB/s through the whole command
// (mb_per_s: result_mb / whole_s), peak RSS ≤ 150 MB. curl and a bare Node copy are references.
//
//   npm run build && node bench/download-bench.js [rows] [runs]
//   BULKCHECK_DIST=/tmp/other-dist node bench/download-bench.js     # the sandbox from another build
//
// What each figure is (median of `runs` runs, each figure's median taken on its own):
// - result_mb: the bytes the sandbox serves (the CSV, or the zip), what both clients download.
// - whole_s: wall time of the whole command, start to exit. For bulkcheck that includes Node's
//   start-up, loading the CLI, one task check for a fresh link, and fsync + rename of the output.
// - transfer_s: curl: first result byte to done (time_total - time_starttransfer). bulkcheck: the
//   result response's headers (undici's `undici:request:headers` diagnostics channel) to the output
//   being linked or renamed onto the destination, both seen by an --import preload that only
//   observes; it covers reading, checking, tallying, writing and fsync. startup_s is bulkcheck's
//   process start to those headers; commit_to_exit_s is what the CLI does after that (summary, exit).
// - mb_per_s: result_mb / whole_s or / transfer_s; ratio: curl's time over bulkcheck's.
// - peak_rss_mb: GNU time's %M (or /proc VmHWM polling), from ./measure.js.
// - node_copy: the least any Node client can do, for scale: one task check for a fresh link,
//   the result written to a file as it arrives (node:http, fs.writeSync), fsync, no checks.
// For zip results curl only downloads; `curl_unzip` (curl -o, then unzip -p to a file) is the
// closer reference for what bulkcheck does, and is given too when unzip exists.
// Each output is checked: for CSV results bulkcheck's file must equal curl's byte for byte (the
// sandbox writes the spec header and LF line ends, so the fast case copies its lines through), and for
// zip results it must equal the CSV case's output.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measure, median } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));
const dist = process.env.BULKCHECK_DIST
  ? pathToFileURL(`${process.env.BULKCHECK_DIST.replace(/\/$/, "")}/`)
  : new URL("../dist/", import.meta.url);
const PRODUCTS = ["number_validation_batch", "carrier_batch"];
const MB = 1024 * 1024;

/**
 * Valid, distinct GB mobiles (libphonenumber-js max: 447400000000 … 447400999999 are MOBILE),
 * in number order, or `shuffled` in a fixed pseudo-random order as a real list comes.
 */
export function writeList(path, count, { shuffled = false } = {}) {
  const lines = new Array(count);
  for (let i = 0; i < count; i++) lines[i] = String(447_400_000_000 + i);
  let seed = 19;
  for (let i = shuffled ? count - 1 : 0; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = seed % (i + 1);
    [lines[i], lines[j]] = [lines[j], lines[i]];
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
}

/**
 * Loaded into the bulkcheck child with --import. It only observes: when the result's
 * response headers arrive, when the output is put in place (the link or rename onto the
 * destination, which follows the fsync), and when the process exits.
 */
const PRELOAD = `
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
const marks = {};
subscribe("undici:request:headers", ({ request }) => {
  if (marks.headers === undefined && String(request.path).includes("/results/")) marks.headers = performance.now();
});
const fsp = createRequire(import.meta.url)("node:fs/promises");
for (const name of ["link", "rename"]) {
  const original = fsp[name];
  fsp[name] = async (from, to) => {
    const result = await original(from, to);
    if (String(to) === process.env.BENCH_OUTPUT) marks.committed = performance.now();
    return result;
  };
}
syncBuiltinESMExports();
process.on("exit", () => writeFileSync(process.env.BENCH_TIMING_FILE, JSON.stringify({ ...marks, exit: performance.now() })));
`;

async function api(sandbox, path, init = {}) {
  const response = await fetch(`${sandbox.url}/api/v1${path}`, { ...init, headers: { "x-api-key": sandbox.apiKey } });
  const body = await response.json();
  if (body.code !== 0) throw new Error(`${path}: ${JSON.stringify(body)}`);
  return body.data;
}

export async function submitAndWait(sandbox, product, list) {
  const form = new FormData();
  form.append("service_type", product);
  form.append("country", "GB");
  form.append("file", new Blob([readFileSync(list)]), "numbers.txt");
  const { id } = await api(sandbox, "/bulk-tasks", { method: "POST", body: form });
  for (;;) {
    const task = await api(sandbox, `/bulk-tasks/${id}`);
    if (task.status === "failed") throw new Error(`task ${id} failed`);
    if (task.status === "success" && task.result_url) return task;
    await sleep(1000);
  }
}

/** A sandbox that takes `list` (of `rows` numbers) as one task and finishes it at once. */
export function sandboxOptions(list, rows) {
  return { maxTaskSize: rows, maxFileBytes: Math.max(30_000_000, statSync(list).size), numbersPerSecond: 1_000_000, balanceMicros: 1e13 };
}

/** A fresh result link, as bulkcheck itself gets one (links are time-limited). */
async function resultUrl(sandbox, id) {
  return (await api(sandbox, `/bulk-tasks/${id}`)).result_url;
}

function sha256(path) {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

const seconds = (ms) => Number((ms / 1000).toFixed(3));
const rate = (bytes, s) => Number((bytes / MB / s).toFixed(1));

async function curlOnce(url, out) {
  rmSync(out, { force: true });
  const run = await measure("curl", ["-sS", "-o", out, "-w", "%{time_starttransfer} %{time_total} %{size_download}", url]);
  if (run.code !== 0) throw new Error(`curl failed (${run.code}): ${run.stderr}`);
  const [startTransfer, total, size] = run.stdout.trim().split(" ").map(Number);
  return { wallMs: run.wallMs, transferMs: (total - startTransfer) * 1000, rss: run.peakRssMb, bytes: size };
}

/** node_copy's client: see the header. */
const NODE_COPY = `
const http = require("node:http");
const fs = require("node:fs");
const [base, key, id, out] = process.argv.slice(1);
http.get(base + "/api/v1/bulk-tasks/" + id, { headers: { "x-api-key": key } }, (task) => {
  let body = "";
  task.setEncoding("utf8").on("data", (text) => (body += text)).on("end", () => {
    const fd = fs.openSync(out, "w");
    http.get(JSON.parse(body).data.result_url, (result) => {
      result.on("data", (chunk) => fs.writeSync(fd, chunk)).on("end", () => { fs.fsyncSync(fd); fs.closeSync(fd); });
    });
  });
});`;

async function nodeCopyOnce(sandbox, id, out) {
  rmSync(out, { force: true });
  const run = await measure(process.execPath, ["-e", NODE_COPY, sandbox.url, sandbox.apiKey, id, out], {
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  if (run.code !== 0) throw new Error(`node copy failed (${run.code}): ${run.stderr.slice(0, 300)}`);
  return { wallMs: run.wallMs };
}

async function curlUnzipOnce(url, zipPath, out) {
  rmSync(out, { force: true });
  const started = performance.now();
  const fetched = await curlOnce(url, zipPath);
  const unzip = await measure("sh", ["-c", 'unzip -p "$0" > "$1"', zipPath, out]);
  if (unzip.code !== 0) throw new Error(`unzip failed: ${unzip.stderr}`);
  return { wallMs: performance.now() - started, rss: Math.max(fetched.rss, unzip.peakRssMb) };
}

async function bulkcheckOnce(sandbox, id, dir, out) {
  rmSync(out, { force: true });
  const timingFile = join(dir, "timing.json");
  const env = {
    ...process.env,
    BULKCHECK_BASE_URL: sandbox.url,
    BULKCHECK_API_KEY: sandbox.apiKey,
    BULKCHECK_CONFIG_DIR: join(dir, "config"),
    BENCH_TIMING_FILE: timingFile,
    BENCH_OUTPUT: out,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${pathToFileURL(join(dir, "preload.mjs")).href}`,
  };
  const run = await measure(process.execPath, [BIN, "download", id, "-o", out], { env });
  if (run.code !== 0) throw new Error(`bulkcheck download failed (${run.code}): ${run.stderr.slice(0, 500)}`);
  const timing = JSON.parse(readFileSync(timingFile, "utf8"));
  return {
    wallMs: run.wallMs,
    startupMs: timing.headers,
    transferMs: timing.committed - timing.headers,
    exitMs: timing.exit - timing.committed,
    rss: run.peakRssMb,
  };
}

/** Times both clients `runs` times on one finished task and summarises the medians. */
async function compare(sandbox, task, { runs, dir, format }) {
  const curlOut = join(dir, `curl.${format}`);
  const ourOut = join(dir, "bulkcheck.csv");
  // The sandbox builds a result file on its first download; build it before timing anything.
  await curlOnce(await resultUrl(sandbox, task.id), curlOut);
  const curl = [];
  const ours = [];
  const curlUnzip = [];
  const nodeCopy = [];
  for (let i = 0; i < runs; i++) {
    curl.push(await curlOnce(await resultUrl(sandbox, task.id), curlOut));
    ours.push(await bulkcheckOnce(sandbox, task.id, dir, ourOut));
    if (format === "csv") nodeCopy.push(await nodeCopyOnce(sandbox, task.id, join(dir, "node-copy.csv")));
    if (format === "zip" && existsSync("/usr/bin/unzip")) {
      curlUnzip.push(await curlUnzipOnce(await resultUrl(sandbox, task.id), join(dir, "c.zip"), join(dir, "curl-unzipped.csv")));
    }
  }
  const bytes = curl[0].bytes;
  const figures = (list, key) => median(list.map((run) => run[key]));
  const curlWhole = figures(curl, "wallMs");
  const curlTransfer = figures(curl, "transferMs");
  const ourWhole = figures(ours, "wallMs");
  const ourTransfer = figures(ours, "transferMs");
  return {
    rows: task.success_cnt,
    result_mb: Number((bytes / MB).toFixed(1)),
    output_mb: Number((statSync(ourOut).size / MB).toFixed(1)),
    output_sha256: sha256(ourOut),
    identical_to_curl: format === "csv" ? sha256(ourOut) === sha256(curlOut) : undefined,
    curl: {
      whole_s: seconds(curlWhole),
      transfer_s: seconds(curlTransfer),
      mb_per_s: rate(bytes, curlWhole / 1000),
      transfer_mb_per_s: rate(bytes, curlTransfer / 1000),
      peak_rss_mb: figures(curl, "rss"),
    },
    bulkcheck: {
      whole_s: seconds(ourWhole),
      startup_s: seconds(figures(ours, "startupMs")),
      transfer_s: seconds(ourTransfer),
      commit_to_exit_s: seconds(figures(ours, "exitMs")),
      mb_per_s: rate(bytes, ourWhole / 1000),
      transfer_mb_per_s: rate(bytes, ourTransfer / 1000),
      peak_rss_mb: figures(ours, "rss"),
    },
    ratio_whole: Number((curlWhole / ourWhole).toFixed(2)),
    ratio_transfer: Number((curlTransfer / ourTransfer).toFixed(2)),
    node_copy:
      nodeCopy.length > 0
        ? { whole_s: seconds(figures(nodeCopy, "wallMs")), ratio_whole: Number((curlWhole / figures(nodeCopy, "wallMs")).toFixed(2)) }
        : undefined,
    curl_unzip:
      curlUnzip.length > 0 ? { whole_s: seconds(figures(curlUnzip, "wallMs")), peak_rss_mb: figures(curlUnzip, "rss") } : undefined,
  };
}

export async function run({ rows = 1_000_000, runs = 3, products = PRODUCTS, formats = ["csv", "zip"] } = {}) {
  const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-download-bench-"));
  writeFileSync(join(dir, "preload.mjs"), PRELOAD);
  const list = join(dir, "list.txt");
  writeList(list, rows);
  const cases = {};
  try {
    for (const format of formats) {
      const sandbox = await startSandbox({ resultFormat: format, ...sandboxOptions(list, rows) });
      try {
        for (const product of products) {
          const task = await submitAndWait(sandbox, product, list);
          cases[`${product}/${format}`] = await compare(sandbox, task, { runs, dir, format });
        }
      } finally {
        await sandbox.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const product of products) {
    const zipped = cases[`${product}/zip`];
    if (zipped && cases[`${product}/csv`]) zipped.identical_to_csv_case = zipped.output_sha256 === cases[`${product}/csv`].output_sha256;
  }
  return {
    name: "download",
    node: process.version,
    machine: { cpus: availableParallelism(), model: cpus()[0]?.model, load_average_at_end: loadavg().map((n) => Number(n.toFixed(1))) },
    rows,
    runs,
    cases,
    target: { carrier_csv_mb_per_s: 50, peak_rss_mb: 150 },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [rows, runs] = process.argv.slice(2).map(Number);
  console.log(JSON.stringify(await run({ rows: rows || undefined, runs: runs || undefined }), null, 2));
}

#!/usr/bin/env node
// The benchmark suite: runs every benchmark (each in its own child process, one at a
// time), prints a table of the headline figures against their targets, and writes
// everything to bench/results.json. Needs a build (`npm run build`) and curl.
//   npm run bench              all of them
//   npm run bench -- upload    only the named ones (prepare, validate, upload, download, startup, sandbox)
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { measure, median } from "./measure.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const BIN = join(here, "..", "bin", "bulkcheck.js");

/** Runs a benchmark script and returns the JSON object it prints last. */
function script(name, args = []) {
  const out = execFileSync(process.execPath, [join(here, name), ...args], { encoding: "utf8", maxBuffer: 1 << 26, stdio: ["ignore", "pipe", "inherit"] });
  return JSON.parse(out.slice(out.indexOf("{")));
}

/** `bulkcheck validate` on the 500k-row messy CSV and .txt: the command a user runs (target ≤ 2.5 s / ≤ 1.5 s). */
async function validate() {
  const rows = 500_000;
  const csv = join(here, "data", `messy-${rows}.csv`);
  const txt = join(here, "data", `messy-${rows}.txt`);
  if (!existsSync(csv) || !existsSync(txt)) execFileSync(process.execPath, [join(here, "gen-messy-csv.js"), String(rows)], { stdio: "ignore" });
  const once = async (file) => {
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await measure(process.execPath, [BIN, "validate", file, "--country", "GB", "-o", "/dev/null", "--force", "--quiet"]));
    const failed = runs.find((run) => run.code !== 0);
    if (failed) throw new Error(`validate failed: ${failed.stderr}`);
    return { wall_s: Number((median(runs.map((r) => r.wallMs)) / 1000).toFixed(2)), peak_rss_mb: Math.max(...runs.map((r) => r.peakRssMb)) };
  };
  return { name: "validate", rows, csv: await once(csv), txt: await once(txt), targets: { csv_wall_s: 2.5, txt_wall_s: 1.5, peak_rss_mb: 300 } };
}

const BENCHES = {
  prepare: async () => script("prepare-bench.js"),
  validate,
  upload: async () => (await import("./upload-bench.js")).run(),
  download: async () => (await import("./download-bench.js")).run(),
  startup: async () => (await import("./startup-bench.js")).run(),
  sandbox: async () => script("sandbox-bench.js"),
};

/** One line per headline figure: what, measured, reference, target. */
function headlines(results) {
  const rows = [];
  const add = (what, measured, reference, target) => rows.push([what, measured, reference ?? "", target ?? ""]);
  const { prepare, validate: v, upload, download, startup, sandbox } = results;
  if (prepare) add("prepareList 500k messy CSV", `${prepare.csv.prepare.wall_ms} ms`, `plain loop ${prepare.csv.plain_loop.wall_ms} ms`, "≤ 2500 ms, same kept set: " + prepare.csv.kept_sets_identical);
  if (v) {
    add("bulkcheck validate 500k CSV", `${v.csv.wall_s} s, ${v.csv.peak_rss_mb} MB`, "", "≤ 2.5 s, ≤ 300 MB");
    add("bulkcheck validate 500k TXT", `${v.txt.wall_s} s, ${v.txt.peak_rss_mb} MB`, "", "≤ 1.5 s");
  }
  if (upload) add(`submit ${upload.upload_mb} MB list`, `${upload.bulkcheck.wall_seconds} s, ${upload.bulkcheck.peak_rss_mb} MB`, `curl -F ${upload.curl.wall_seconds} s, ${upload.curl.peak_rss_mb} MB`, "RSS ≤ 120 MB");
  if (download) {
    for (const [name, c] of Object.entries(download.cases)) {
      add(`download ${download.rows} rows ${name}`, `${c.bulkcheck.whole_s} s (transfer ${c.bulkcheck.transfer_s} s), ${c.bulkcheck.peak_rss_mb} MB`, `curl ${c.curl.whole_s} s (transfer ${c.curl.transfer_s} s)${c.node_copy ? `; a bare Node copy ${c.node_copy.whole_s} s (${c.node_copy.ratio_whole}×)` : ""}`, `≥ 0.7× curl: whole ${c.ratio_whole}×, transfer ${c.ratio_transfer}×; RSS ≤ 150 MB`);
    }
  }
  if (startup) {
    add("bulkcheck --version", `${startup.version_ms} ms (${startup.version_ratio}×)`, `node -e 0 ${startup.node_e0_ms} ms`, "");
    add("bulkcheck status --help", `${startup.status_help_ms} ms (${startup.status_help_ratio}×)`, `node -e 0 ${startup.node_e0_ms} ms`, `≤ ${startup.target_ratio}× on Node 20`);
    for (const [version, { compile_cache: cached }] of Object.entries(startup.other_nodes ?? {})) {
      add(`bulkcheck status --help, ${version}, compile cache`, `${cached.status_help_ms} ms (${cached.status_help_ratio}×)`, `node -e 0 ${cached.node_e0_ms} ms`, "");
    }
  }
  if (sandbox) {
    add("sandbox GET task, 50 clients", `${sandbox.check_endpoint.requests_per_second} req/s`, "", "");
    add("sandbox 500k-number task end to end", `${sandbox.end_to_end.total_seconds} s`, "", "");
  }
  return rows;
}

function printTable(rows) {
  const header = ["benchmark", "measured", "reference", "target"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(BENCHES);
const resultsPath = join(here, "results.json");
// A run of some benchmarks keeps the others' last figures; each says when it was measured.
const earlier = existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, "utf8")) : {};
const machine = { cpus: availableParallelism(), model: cpus()[0]?.model, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version, platform: process.platform };
const fresh = {};
for (const name of wanted) {
  if (!BENCHES[name]) throw new Error(`unknown benchmark ${name}; choose from ${Object.keys(BENCHES).join(", ")}`);
  process.stderr.write(`running ${name}…\n`);
  const measuredAt = new Date().toISOString();
  fresh[name] = { ...(await BENCHES[name]()), measured_at: measuredAt, loadavg_1m_after: loadavg()[0] };
}
writeFileSync(resultsPath, JSON.stringify({ ...earlier, machine, ...fresh }, null, 2) + "\n");
printTable(headlines(fresh));
console.log(`\nAll figures: bench/results.json (load average at the end: ${loadavg()[0].toFixed(2)} on ${machine.cpus} cores)`);

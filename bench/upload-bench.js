// Upload: a ~20 MB upload list submitted to a local sandbox by `bulkcheck submit` and by
// `curl -F` (the reference), wall time and peak RSS of each; the same submit of half the
// list, so the growth with the list shows; and `validate` of the list, the preparation
// without the upload. bulkcheck also prepares the list (validates every number) first,
// and its dedup set grows with the numbers (12 bytes a slot, doubled when 3/4 full).
// Target: submit's peak RSS ≤ 200 MB at 1.6 M numbers, the file streamed, never held whole.
//
// The streaming check proper: the API client alone (bench/upload-client.js, in a process
// of its own) uploads a 50 MB and a 150 MB file to a server in another process
// (bench/upload-server.mjs) that hashes what arrives. Streamed, its peak RSS is the same
// for both (read chunks wait for V8's next collection, a few tens of MB over the client
// loaded without uploading); read whole, the file would be in it.
//   node bench/upload-bench.js [numbers]
import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measure } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));
const distPath = process.env.BULKCHECK_DIST ?? fileURLToPath(new URL("../dist/", import.meta.url));
const dist = pathToFileURL(`${distPath.replace(/\/$/, "")}/`);
const MB = 1024 * 1024;

/** Valid, distinct GB mobile numbers: 4474 + 8 digits. */
function writeList(path, count) {
  const lines = new Array(count);
  for (let i = 0; i < count; i++) lines[i] = `4474${String(i).padStart(8, "0")}`;
  writeFileSync(path, lines.join("\n") + "\n");
  lines.length = 0;
}

/** Writes `bytes` of phone-number lines in 1 MB blocks; returns their SHA-256. */
async function writeNumbers(path, bytes) {
  const block = "14155550100\n".repeat(Math.ceil(MB / 12)).slice(0, MB);
  const hash = createHash("sha256");
  const out = createWriteStream(path);
  for (let written = 0; written < bytes; written += block.length) {
    hash.update(block);
    if (!out.write(block)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  return hash.digest("hex");
}

const figures = (run) => ({ wall_seconds: Number((run.wallMs / 1000).toFixed(2)), peak_rss_mb: run.peakRssMb });

/** `bulkcheck submit` (or curl) of `list` to a fresh sandbox. */
async function submitOnce(client, list, dir) {
  const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);
  const bytes = statSync(list).size;
  const sandbox = await startSandbox({ maxTaskSize: 1e8, maxFileBytes: bytes * 2, balanceMicros: 1e13, numbersPerSecond: 1e9 });
  try {
    const env = {
      ...process.env,
      BULKCHECK_BASE_URL: sandbox.url,
      BULKCHECK_API_KEY: sandbox.apiKey,
      BULKCHECK_CONFIG_DIR: join(dir, `config-${client}-${bytes}`),
    };
    for (const [key, value] of [
      ["max-task-size", 1e8],
      ["max-file-bytes", bytes * 2],
    ]) {
      await measure(process.execPath, [BIN, "config", "set", key, String(value)], { env });
    }
    const run =
      client === "curl"
        ? await measure("curl", [
            "-sS",
            "-H",
            `X-API-Key: ${sandbox.apiKey}`,
            "-F",
            "service_type=number_validation_batch",
            "-F",
            "country=GB",
            "-F",
            `file=@${list}`,
            `${sandbox.url}/api/v1/bulk-tasks`,
          ])
        : await measure(
            process.execPath,
            [BIN, "submit", list, "--type", "number_validation_batch", "--country", "GB", "--yes", "--quiet"],
            { env },
          );
    if (run.code !== 0) throw new Error(`${client} failed (${run.code}): ${run.stderr.slice(0, 300)}`);
    return figures(run);
  } finally {
    await sandbox.close();
  }
}

/** The API client alone uploading files of `sizes` bytes, and loading without uploading. */
async function clientOnly(dir, sizes) {
  const server = fork(fileURLToPath(new URL("./upload-server.mjs", import.meta.url)));
  try {
    const message = () => once(server, "message").then(([value]) => value);
    const listening = message();
    server.send({
      task: {
        id: "0123456789abcdef0123456789abcdef",
        product: "number_validation_batch",
        status: "processing",
        total: 1,
        created_at: "2030-01-01T12:00:00Z",
      },
    });
    const { port } = await listening;
    const script = fileURLToPath(new URL("./upload-client.js", import.meta.url));
    const idle = await measure(process.execPath, [script, distPath, String(port), "idle"]);
    const uploads = [];
    for (const bytes of sizes) {
      const file = join(dir, "big.txt");
      const sha256 = await writeNumbers(file, bytes);
      const received = message();
      const upload = await measure(process.execPath, [script, distPath, String(port), file]);
      if (upload.code !== 0) throw new Error(`upload failed: ${upload.stderr.slice(0, 300)}`);
      const got = await received;
      rmSync(file);
      uploads.push({ file_mb: Math.round(bytes / MB), received_intact: got.size === bytes && got.sha256 === sha256, ...figures(upload) });
    }
    return { idle_peak_rss_mb: idle.peakRssMb, uploads };
  } finally {
    server.kill();
  }
}

export async function run({ numbers = 1_600_000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-upload-bench-"));
  const list = join(dir, "list.txt");
  const half = join(dir, "half.txt");
  writeList(list, numbers);
  writeList(half, Math.floor(numbers / 2));
  try {
    const validate = await measure(process.execPath, [
      BIN,
      "validate",
      list,
      "--country",
      "GB",
      "-o",
      join(dir, "upload.txt"),
      "--force",
      "--quiet",
    ]);
    if (validate.code !== 0) throw new Error(`validate failed: ${validate.stderr.slice(0, 300)}`);
    return {
      name: "upload",
      numbers,
      upload_mb: Number((statSync(list).size / MB).toFixed(1)),
      curl: await submitOnce("curl", list, dir),
      bulkcheck: await submitOnce("bulkcheck", list, dir),
      bulkcheck_half_list: await submitOnce("bulkcheck", half, dir),
      validate_same_list: figures(validate),
      client_only: await clientOnly(dir, [50 * MB, 150 * MB]),
      target_peak_rss_mb: 200,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await run({ numbers: Number(process.argv[2] ?? 1_600_000) }), null, 2));
}

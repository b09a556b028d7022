// Sandbox benchmark: check-endpoint throughput and one 500,000-number task end to end.
// Run after a build:   node bench/sandbox-bench.js
// Or against another build directory:   BULKCHECK_DIST=/tmp/sbx-dist node bench/sandbox-bench.js
// Options (env): BENCH_SECONDS (default 5), BENCH_CLIENTS (50), BENCH_NUMBERS (500000),
// BENCH_PRODUCT (number_validation_batch), BENCH_CLOCK_SPEEDUP (100: simulated waiting is skipped,
// so the figures measure the sandbox's own work: classification, result building, transfer).
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { Client, FormData, request, Agent } from "undici";

const dist = process.env.BULKCHECK_DIST
  ? pathToFileURL(`${process.env.BULKCHECK_DIST.replace(/\/$/, "")}/`)
  : new URL("../dist/", import.meta.url);
const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const clients = Number(process.env.BENCH_CLIENTS ?? 50);
const numbers = Number(process.env.BENCH_NUMBERS ?? 500_000);
const product = process.env.BENCH_PRODUCT ?? "number_validation_batch";
const speedup = Number(process.env.BENCH_CLOCK_SPEEDUP ?? 100);

function numberList(count) {
  const lines = [];
  for (let i = 0; i < count; i++) lines.push(`+4474${String(10_000_000 + i).slice(-8)}`);
  return `${lines.join("\n")}\n`;
}

async function submit(sandbox, dispatcher, content) {
  const form = new FormData();
  form.append("service_type", product);
  form.append("country", "GB");
  form.append("file", new Blob([content]), "numbers.txt");
  const response = await request(`${sandbox.url}/api/v1/bulk-tasks`, {
    method: "POST",
    headers: { "x-api-key": sandbox.apiKey },
    body: form,
    dispatcher,
  });
  const body = await response.body.json();
  if (body.code !== 0) throw new Error(`submit failed: ${JSON.stringify(body)}`);
  return body.data;
}

async function checkThroughput() {
  const sandbox = await startSandbox({ balanceMicros: 1e12 });
  const agent = new Agent();
  const task = await submit(sandbox, agent, numberList(500));
  const path = `/api/v1/bulk-tasks/${task.id}`;
  const pool = Array.from({ length: clients }, () => new Client(sandbox.url));
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    pool.map(async (client) => {
      while (performance.now() < deadline) {
        try {
          const response = await client.request({ path, method: "GET", headers: { "x-api-key": sandbox.apiKey } });
          await response.body.dump();
          if (response.statusCode === 200) done += 1;
          else errors += 1;
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(pool.map((client) => client.close()));
  await agent.close();
  await sandbox.close();
  return { clients, seconds: Number(elapsed.toFixed(2)), requests: done, errors, requests_per_second: Math.round(done / elapsed) };
}

async function endToEnd() {
  const origin = Date.now();
  const sandbox = await startSandbox({ balanceMicros: 1e12, now: () => origin + (Date.now() - origin) * speedup });
  const agent = new Agent({ headersTimeout: 600_000, bodyTimeout: 600_000 });
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  const content = numberList(numbers);
  const t0 = performance.now();
  const task = await submit(sandbox, agent, content);
  const t1 = performance.now();
  let view = task;
  while (view.status === "processing" || !view.result_url) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const response = await request(`${sandbox.url}/api/v1/bulk-tasks/${task.id}`, {
      headers: { "x-api-key": sandbox.apiKey },
      dispatcher: agent,
    });
    view = (await response.body.json()).data;
    if (view.status === "failed") throw new Error("task failed");
  }
  const t2 = performance.now();
  const response = await request(view.result_url, { dispatcher: agent });
  let bytes = 0;
  for await (const chunk of response.body) bytes += chunk.length;
  const t3 = performance.now();
  clearInterval(sampler);
  await agent.close();
  await sandbox.close();
  const s = (ms) => Number((ms / 1000).toFixed(2));
  return {
    product,
    numbers,
    upload_bytes: Buffer.byteLength(content),
    clock_speedup: speedup,
    submit_seconds: s(t1 - t0),
    submit_to_success_seconds: s(t2 - t1),
    download_seconds: s(t3 - t2),
    total_seconds: s(t3 - t0),
    result_bytes: bytes,
    success_cnt: view.success_cnt,
    peak_rss_mb: Math.round(peakRss / 1024 / 1024),
  };
}

const result = { node: process.version, check_endpoint: await checkThroughput(), end_to_end: await endToEnd() };
console.log(JSON.stringify(result, null, 2));

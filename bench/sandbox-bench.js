// Sandbox benchmark: check-endpoint throughput, one 500,000-number task end to end, and the
// sandbox's memory over many tasks (each submitted, finished and downloaded).
// Run after a build:   node bench/sandbox-bench.js
// Or against another build directory:   BULKCHECK_DIST=/tmp/sbx-dist node bench/sandbox-bench.js
// Options (env): BENCH_SECONDS (default 5), BENCH_CLIENTS (50), BENCH_NUMBERS (500000),
// BENCH_PRODUCT (number_validation_batch), BENCH_CLOCK_SPEEDUP (100: simulated waiting is skipped,
// so the figures measure the sandbox's own work: classification, result building, transfer),
// BENCH_TASKS (1000) of BENCH_TASK_NUMBERS (1000) numbers each for the memory run.
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
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

/** Checks the task every `pollMs` until it has succeeded and has a result_url; returns that view. */
async function finished(sandbox, dispatcher, task, pollMs) {
  let view = task;
  while (view.status === "processing" || !view.result_url) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const response = await request(`${sandbox.url}/api/v1/bulk-tasks/${task.id}`, { headers: { "x-api-key": sandbox.apiKey }, dispatcher });
    view = (await response.body.json()).data;
    if (view.status === "failed") throw new Error("task failed");
  }
  return view;
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
  const view = await finished(sandbox, agent, task, 100);
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

/**
 * Memory of a sandbox serving many tasks: each is submitted, finished (on a fast
 * clock) and downloaded, one after another; heap and RSS are sampled as tasks
 * accumulate. A task's numbers are dropped once its result file is built, so the
 * heap should stay flat rather than grow with every task.
 */
async function manyTasks() {
  const tasks = Number(process.env.BENCH_TASKS ?? 1000);
  const perTask = Number(process.env.BENCH_TASK_NUMBERS ?? 1000);
  const origin = Date.now();
  const sandbox = await startSandbox({ balanceMicros: 1e15, maxUnfinished: tasks, now: () => origin + (Date.now() - origin) * 1000 });
  const agent = new Agent();
  const samples = [];
  const mb = (bytes) => Math.round(bytes / 1024 / 1024);
  // A measurement, not the product: collecting garbage before each sample shows what is retained.
  setFlagsFromString("--expose-gc");
  const collect = runInNewContext("gc");
  const t0 = performance.now();
  for (let n = 1; n <= tasks; n++) {
    const view = await finished(sandbox, agent, await submit(sandbox, agent, numberList(perTask)), 5);
    await (await request(view.result_url, { dispatcher: agent })).body.dump({ limit: Infinity });
    if (n === 1 || n % Math.max(1, Math.round(tasks / 4)) === 0) {
      collect();
      const { heapUsed, rss } = process.memoryUsage();
      samples.push({ tasks: n, heap_used_mb: mb(heapUsed), rss_mb: mb(rss) });
    }
  }
  const seconds = Number(((performance.now() - t0) / 1000).toFixed(1));
  await agent.close();
  await sandbox.close();
  return { tasks, numbers_per_task: perTask, seconds, samples };
}

const result = {
  node: process.version,
  check_endpoint: await checkThroughput(),
  end_to_end: await endToEnd(),
  many_tasks: await manyTasks(),
};
console.log(JSON.stringify(result, null, 2));

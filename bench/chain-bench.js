// A chain of two products against the sandbox (issue 37): `submit LIST --type carrier_batch
// --then number_activity_batch:number_type=mobile --wait -o OUT` of a list that is 60% GB mobiles
// and 40% London landlines, against the sum of each product's own run of its numbers: carrier_batch
// of the whole list, then number_activity_batch of the mobiles alone (each a plain submit on a
// fresh sandbox and config). Target: the chain within 10% of that sum. The sandbox processes
// 20,000 numbers a second with 3 unfinished tasks at once; tasks of at most 100,000 numbers.
//
//   npm run build && node bench/chain-bench.js [numbers=1000000]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { measure } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));
const dist = new URL("../dist/", import.meta.url);
const { startSandbox } = await import(new URL("sandbox/index.js", dist).href);

const numbers = Number(process.argv[2] ?? 1_000_000);
const TASK_SIZE = 100_000;
const seconds = (ms) => Number((ms / 1000).toFixed(2));
/** The sandbox's own time for a task of `lines` numbers, all kept (src/sandbox/lifecycle.ts). */
const taskMs = (lines) => 500 + Math.ceil((lines * 1000) / 20_000) + Math.ceil((lines * 1000) / 20_000);

/** Every fifth number in two is a landline: 60% mobiles (07400…), 40% London numbers (0207…), mixed. */
function lists(dir) {
  const all = [];
  const mobiles = [];
  for (let i = 0; i < numbers; i++) {
    const number = i % 5 < 3 ? String(447_400_000_000 + i) : String(442_070_000_000 + i);
    all.push(number);
    if (i % 5 < 3) mobiles.push(number);
  }
  const list = join(dir, "list.txt");
  const mobileList = join(dir, "mobiles.txt");
  writeFileSync(list, `${all.join("\n")}\n`);
  writeFileSync(mobileList, `${mobiles.join("\n")}\n`);
  return { list, mobileList, mobiles: mobiles.length };
}

/** One `submit` on a fresh sandbox and config: its wall time, and the sandbox's tasks by product. */
async function submit(dir, name, args) {
  const sandbox = await startSandbox({ numbersPerSecond: 20_000, maxTaskSize: TASK_SIZE, maxUnfinished: 3, balanceMicros: 1e13 });
  try {
    const env = {
      ...process.env,
      BULKCHECK_CONFIG_DIR: join(dir, `config-${name}`),
      BULKCHECK_BASE_URL: sandbox.url,
      BULKCHECK_API_KEY: sandbox.apiKey,
    };
    await measure(process.execPath, [BIN, "config", "set", "max-task-size", String(TASK_SIZE)], { env });
    const startedAt = Date.now();
    const t0 = performance.now();
    const run = await measure(
      process.execPath,
      [BIN, "submit", ...args, "--country", "GB", "--wait", "-y", "-o", join(dir, `${name}.csv`)],
      { env },
    );
    const wallMs = performance.now() - t0;
    if (run.code !== 0) throw new Error(`${name} failed (${run.code}): ${run.stderr.slice(-800)}`);
    const uploaded = {};
    const tasks = sandbox.inspect().tasks.map((task) => {
      uploaded[task.product] = (uploaded[task.product] ?? 0) + task.total;
      const created = Date.parse(task.created_at) - startedAt;
      return { product: task.product, created, finished: created + taskMs(task.submitted_lines ?? task.total) };
    });
    return { wallMs, uploaded, tasks, peakRssMb: run.peakRssMb };
  } finally {
    await sandbox.close();
  }
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-chain-bench-"));
  try {
    const { list, mobileList, mobiles } = lists(dir);
    const loadBefore = loadavg()[0];
    const carrier = await submit(dir, "carrier", [list, "--type", "carrier_batch"]);
    const activity = await submit(dir, "activity", [mobileList, "--type", "number_activity_batch"]);
    const chain = await submit(dir, "chain", [list, "--type", "carrier_batch", "--then", "number_activity_batch:number_type=mobile"]);
    const sumMs = carrier.wallMs + activity.wallMs;
    // The first product's download (its last task's finish to the end of its own run), against the chain's hand-off
    // between products (the first product's last finish to the later product's first task): the results fetched and
    // recorded as in the download, then the selection, the selected parts written, the plan and the upload.
    const lastFinish = (tasks, product) => Math.max(...tasks.filter((task) => task.product === product).map((task) => task.finished));
    const download = carrier.wallMs - lastFinish(carrier.tasks, "carrier_batch");
    const laterTasks = chain.tasks.filter((task) => task.product === "number_activity_batch");
    const firstEnd = lastFinish(chain.tasks, "carrier_batch");
    // Bought part by part, the later product's first task comes before the first product's last finish (a negative hand-off).
    const handOff = Math.min(...laterTasks.map((task) => task.created)) - firstEnd;
    return {
      numbers,
      mobiles,
      task_size: TASK_SIZE,
      carrier_alone_s: seconds(carrier.wallMs),
      activity_of_the_mobiles_alone_s: seconds(activity.wallMs),
      sum_s: seconds(sumMs),
      chain_s: seconds(chain.wallMs),
      chain_vs_sum: Number((chain.wallMs / sumMs).toFixed(3)),
      first_product_download_s: seconds(download),
      hand_off_between_products_s: seconds(handOff),
      later_tasks_before_first_product_end: laterTasks.filter((task) => task.created < firstEnd).length,
      later_tasks: laterTasks.length,
      // The chain must buy what the two runs bought: every number's carrier, and activity for the mobiles only.
      chain_uploaded: chain.uploaded,
      chain_peak_rss_mb: chain.peakRssMb,
      cpus: availableParallelism(),
      loadavg_1m_before: loadBefore,
      loadavg_1m_after: loadavg()[0],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await run(), null, 2));

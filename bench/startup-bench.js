// Start-up: `bulkcheck --version` and `bulkcheck status --help` against `node -e 0`
// (target: at most 1.6× the bare Node start-up). Prints JSON.
//   node bench/startup-bench.js [runs]
import { fileURLToPath, pathToFileURL } from "node:url";
import { measure, median } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));

async function timeOf(args, runs, env) {
  for (let i = 0; i < 3; i++) await measure(process.execPath, args, { env });
  const walls = [];
  for (let i = 0; i < runs; i++) walls.push((await measure(process.execPath, args, { env })).wallMs);
  return Number(median(walls).toFixed(1));
}

async function figures(runs, env) {
  const node = await timeOf(["-e", "0"], runs, env);
  const version = await timeOf([BIN, "--version"], runs, env);
  const help = await timeOf([BIN, "status", "--help"], runs, env);
  return {
    node_e0_ms: node,
    version_ms: version,
    status_help_ms: help,
    version_ratio: Number((version / node).toFixed(2)),
    status_help_ratio: Number((help / node).toFixed(2)),
  };
}

/**
 * With NODE_EXTRA_CA_CERTS set (as on this workplace's machines) every Node start,
 * the baseline included, first loads the extra certificates, which flatters the
 * ratio; the bare figures are measured too and are the ones to judge by.
 */
export async function run({ runs = 20 } = {}) {
  const { NODE_EXTRA_CA_CERTS, ...bare } = process.env;
  const result = { name: "startup", runs, target_ratio: 1.6, ...(await figures(runs, bare)) };
  if (NODE_EXTRA_CA_CERTS) result.with_node_extra_ca_certs = await figures(runs, process.env);
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await run({ runs: Number(process.argv[2] ?? 20) }), null, 2));
}

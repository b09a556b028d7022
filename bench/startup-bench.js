// Start-up: `bulkcheck --version` and `bulkcheck status --help` against `node -e 0`
// (target: at most 1.6× the bare Node start-up). Prints JSON.
//   node bench/startup-bench.js [runs]
import { fileURLToPath, pathToFileURL } from "node:url";
import { measure, median } from "./measure.js";

const BIN = fileURLToPath(new URL("../bin/bulkcheck.js", import.meta.url));

async function timeOf(args, runs) {
  for (let i = 0; i < 3; i++) await measure(process.execPath, args);
  const walls = [];
  for (let i = 0; i < runs; i++) walls.push((await measure(process.execPath, args)).wallMs);
  return Number(median(walls).toFixed(1));
}

export async function run({ runs = 20 } = {}) {
  const node = await timeOf(["-e", "0"], runs);
  const version = await timeOf([BIN, "--version"], runs);
  const help = await timeOf([BIN, "status", "--help"], runs);
  return {
    name: "startup",
    runs,
    node_e0_ms: node,
    version_ms: version,
    status_help_ms: help,
    version_ratio: Number((version / node).toFixed(2)),
    status_help_ratio: Number((help / node).toFixed(2)),
    target_ratio: 1.6,
    note: process.env.NODE_EXTRA_CA_CERTS ? "NODE_EXTRA_CA_CERTS is set: every node start (the baseline too) loads extra certificates" : undefined,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await run({ runs: Number(process.argv[2] ?? 20) }), null, 2));
}

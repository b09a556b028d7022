// `npm run node-lines [-- LINE...]`: the Node.js binaries of the supported lines (all of them, or
// the LINEs given), each installed from npm into .node-lines/LINE (the node-<platform>-<arch>
// packages that npm's own `node` package installs from); prints the path of each binary, one a
// line. An installation already there is used again. `--lowest` prints only the binary of the
// lowest supported line, and uses the Node running this script when it is of that line.
//
// scripts/test-package.mjs runs the packed package on every binary found in .node-lines; .ci/run
// runs the tests on the lowest line. Plain Node 20 code: CI's machine starts it with Node 20.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The Node.js lines bulkcheck supports: those the Node.js project still maintains (Node 20
 * reached its end of life in April 2026). The lowest is package.json's `engines` (a test checks).
 */
export const SUPPORTED_LINES = [22, 24, 26];

const ROOT = resolve(import.meta.dirname, "..");
/** Where the binaries are installed: ignored by git, the linters and the package. */
export const NODE_LINES_DIR = join(ROOT, ".node-lines");
const ATTEMPTS = 3;

/** The npm package that holds this machine's Node binary. */
function binaryPackage() {
  if (process.platform !== "linux" && process.platform !== "darwin") {
    throw new Error(`no Node.js binary package for ${process.platform} on npm: install the lines yourself and pass --node to test-package`);
  }
  return `node-${process.platform}-${process.arch}`;
}

/** Where a line's binary is once installed. */
function binaryPath(line) {
  return join(NODE_LINES_DIR, String(line), "node_modules", binaryPackage(), "bin", "node");
}

/** The major version of the Node binary at `path`, or undefined when it does not run. */
export function majorOf(path) {
  const run = spawnSync(path, ["--version"], { encoding: "utf8" });
  const major = /^v(\d+)\./.exec(run.stdout ?? "")?.[1];
  return major === undefined ? undefined : Number(major);
}

/** The supported lines installed in .node-lines, each with its binary's path (only those that run as their line). */
export function installedLines() {
  return SUPPORTED_LINES.flatMap((line) => {
    const path = binaryPath(line);
    return existsSync(path) && majorOf(path) === line ? [{ line, path }] : [];
  });
}

/** Installs `line` (unless it is there already) and returns its binary; tries again, a few times, when npm fails. */
export function install(line) {
  const path = binaryPath(line);
  if (existsSync(path) && majorOf(path) === line) return path;
  let output = "";
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const npm = spawnSync(
      "npm",
      ["install", "--prefix", join(NODE_LINES_DIR, String(line)), "--no-save", "--no-audit", "--no-fund", `${binaryPackage()}@${line}`],
      { encoding: "utf8" },
    );
    output = `${npm.stdout ?? ""}${npm.stderr ?? ""}${npm.error ?? ""}`;
    if (npm.status === 0 && majorOf(path) === line) return path;
    // A registry that hiccups: a pause, longer each time.
    if (attempt < ATTEMPTS) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5_000 * attempt);
  }
  throw new Error(`installing Node.js ${line} (${binaryPackage()}@${line}) from npm failed ${ATTEMPTS} times:\n${output}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const { engines } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  if (args[0] === "--lowest") {
    const [lowest] = SUPPORTED_LINES;
    process.stdout.write(`${majorOf(process.execPath) === lowest ? process.execPath : install(lowest)}\n`);
  } else {
    const lines = args.length > 0 ? args.map(Number) : SUPPORTED_LINES;
    const unsupported = lines.filter((line) => !SUPPORTED_LINES.includes(line));
    if (unsupported.length > 0) {
      throw new Error(
        `Node.js ${unsupported.join(", ")} is not a supported line (engines ${engines.node}): ${SUPPORTED_LINES.join(", ")} are`,
      );
    }
    for (const line of lines) process.stdout.write(`${install(line)}\n`);
  }
}

// `npm run test:package [-- --node /path/to/node ...]`: the package as a user gets it, on every
// supported Node.js line at hand. Packs it once; then, for each Node, installs the tarball globally
// into a temporary prefix, and from a directory outside the repository runs `bulkcheck --version`,
// `bulkcheck demo` (with a temporary HOME) and `validate` of a workbook, and finds the man page
// where `man bulkcheck` looks; then installs it into a temporary project, runs
// scripts/package-smoke.mjs there and compiles a TypeScript consumer of its declarations. Fails on
// any non-zero exit, on a peer-dependency, ERESOLVE or engines warning while installing, on a file
// in the tarball that should not be there, and on one that should be and is not.
//
// Which Nodes: those given (--node, more than once, or NODE_BINARY), else the Node running this
// script and every supported line installed in .node-lines (`npm run node-lines` fetches them),
// one binary per line, leaving out a Node older than package.json's engines (with none left, the
// lowest line is installed there first). A supported line with no binary at hand is named at the
// end as not tested: with only the machine's Node, that Node alone is tested. Each
// Node runs npm's installs and the installed command: its directory goes first on PATH, where
// their shebangs look.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { install as installNode, installedLines, majorOf, SUPPORTED_LINES } from "./node-lines.mjs";

const root = resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { node: { type: "string", multiple: true }, keep: { type: "boolean" } } });
const { version, engines } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const lowest = SUPPORTED_LINES[0];
/** Shipped: the bin, the man page, the built package, the sample lists; npm adds package.json, README and LICENSE. */
const SHIPPED = /^(bin\/[^/]+|bulkcheck\.1|dist\/(bundle|types|geo)\/.+|examples\/[^/]+\.csv|package\.json|README\.md|LICENSE)$/;
/** What the package cannot do without: the command, its two bundles and its man page. */
const REQUIRED = ["bin/bulkcheck.js", "dist/bundle/bulkcheck.cjs", "dist/bundle/bulkcheck-actions.cjs", "bulkcheck.1"];
const NOT_SHIPPED = /\.map$|\.test\.|(^|\/)test\//;
const INSTALL_WARNING = /peer|ERESOLVE|EBADENGINE/i;
/** What a TypeScript user of the two entries writes. */
const CONSUMER = `
import { BulkcheckError, classifyCell, createClient, prepareList, type ApiClient, type PrepareResult } from "bulkcheck";
import { startSandbox, type Sandbox, type SandboxOptions } from "bulkcheck/sandbox";

const options: Partial<SandboxOptions> = { port: 0 };
const sandbox: Sandbox = await startSandbox(options);
const client: ApiClient = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
const micros: number = (await client.getBalance()).balance_micros;
const prepared: PrepareResult = await prepareList({ source: "list.csv", country: "GB" });
const kept: number = prepared.summary.kept + micros;
const identifier: string | undefined = classifyCell("+44 7400 123456", { country: "GB" }).identifier;
const kind = (error: unknown) => (error instanceof BulkcheckError ? error.kind : undefined);
export { kept, identifier, kind };
`;

function run(command, args, options) {
  const result = spawnSync(command, args, { encoding: "utf8", ...options });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  if (result.status !== 0)
    throw new Error(`\`${command} ${args.join(" ")}\` exited ${result.status ?? result.signal}:\n${output}${result.error ?? ""}`);
  return { stdout: result.stdout, output };
}

function step(title, check) {
  process.stderr.write(`test-package: ${title} ... `);
  const note = check();
  process.stderr.write(`ok${note ? ` (${note})` : ""}\n`);
}

function install(args, options) {
  const { output } = run("npm", ["install", ...args, "--no-audit", "--no-fund", "--prefer-offline"], options);
  const warning = output.split("\n").find((line) => INSTALL_WARNING.test(line));
  if (warning) throw new Error(`installing printed a warning: ${warning}\n${output}`);
}

/** The Nodes to test on, each with its version, and the supported lines none of them is. */
function nodesToTest() {
  const given = values.node ?? (process.env.NODE_BINARY ? [process.env.NODE_BINARY] : undefined);
  const candidates = given ?? [process.execPath, ...installedLines().map(({ path }) => path)];
  const nodes = [];
  for (const path of candidates.map((candidate) => resolve(candidate))) {
    const major = majorOf(path);
    if (major === undefined) throw new Error(`${path} does not run as Node.js`);
    if (!given && major < lowest) {
      process.stderr.write(`test-package: leaving out Node ${major} (${path}): older than engines ${engines.node}\n`);
      continue;
    }
    // One binary per line: the Node running this script may be one of those in .node-lines.
    if (nodes.some((node) => node.major === major || realpathSync(node.path) === realpathSync(path))) continue;
    nodes.push({ path, major });
  }
  if (nodes.length === 0) {
    // Only an older Node at hand (CI's machine): the lowest line, as .ci/run installs it for the tests.
    process.stderr.write(`test-package: no Node of a supported line at hand: installing Node ${lowest} into .node-lines\n`);
    nodes.push({ path: installNode(lowest), major: lowest });
  }
  return { nodes, untested: SUPPORTED_LINES.filter((line) => !nodes.some((node) => node.major === line)) };
}

/** Installs the tarball with `node` and runs what a user would, in a temporary directory of its own. */
function testOn(node, tarball) {
  const temp = mkdtempSync(join(tmpdir(), "bulkcheck-package-"));
  const prefix = join(temp, "prefix");
  const home = join(temp, "home");
  const bulkcheck = join(prefix, "bin", "bulkcheck");
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(BULKCHECK_|XDG_|npm_)/i.test(name))),
    PATH: [dirname(node), join(prefix, "bin"), process.env.PATH].join(delimiter),
    HOME: home,
  };
  const inTemp = { env, cwd: temp };
  try {
    const used = run(node, ["--version"], inTemp).stdout.trim();
    process.stderr.write(`test-package: Node ${used} (${node})\n`);
    mkdirSync(home);

    step("npm install -g into a temporary prefix", () => install(["-g", "--prefix", prefix, tarball], inTemp));

    step("bulkcheck --version", () => {
      const printed = run(bulkcheck, ["--version"], inTemp).stdout.trim();
      if (printed !== version) throw new Error(`bulkcheck --version printed ${JSON.stringify(printed)}, not ${version}`);
    });

    step("man bulkcheck: the page is installed where man looks", () => {
      const page = join(prefix, "share", "man", "man1", "bulkcheck.1");
      if (readFileSync(page, "utf8") !== readFileSync(join(root, "bulkcheck.1"), "utf8")) throw new Error(`${page} is not bulkcheck.1`);
    });

    step("bulkcheck demo", () => {
      run(bulkcheck, ["demo", "--dir", join(temp, "demo")], inTemp);
    });

    // A workbook as openpyxl (and so pandas) writes it, read by the installed reader (yauzl and saxes).
    const workbook = join(root, "test", "fixtures", "workbooks", "openpyxl.xlsx");
    step("bulkcheck validate of an Excel workbook", () => {
      const summary = JSON.parse(run(bulkcheck, ["validate", workbook, "--country", "GB", "--column", "mobile", "--json"], inTemp).stdout);
      if (summary.kept !== 6) throw new Error(`validate of a workbook of 6 distinct numbers kept ${summary.kept}`);
    });

    const project = join(temp, "project");
    mkdirSync(project);
    const inProject = { env, cwd: project };
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    step("npm install of the tarball into a project", () => install([tarball], inProject));

    step('import from "bulkcheck" and "bulkcheck/sandbox"', () => {
      copyFileSync(join(root, "scripts", "package-smoke.mjs"), join(project, "smoke.mjs"));
      return run(node, ["smoke.mjs"], inProject).stdout.trim();
    });

    step("a TypeScript consumer compiles against the declarations", () => {
      writeFileSync(join(project, "consumer.ts"), CONSUMER);
      const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
      const types = join(root, "node_modules", "@types");
      run(
        process.execPath,
        [
          tsc,
          "--noEmit",
          "--strict",
          "--module",
          "nodenext",
          "--moduleResolution",
          "nodenext",
          "--target",
          "es2022",
          "--typeRoots",
          types,
          "--types",
          "node",
          "consumer.ts",
        ],
        inProject,
      );
    });
  } finally {
    if (values.keep) process.stderr.write(`test-package: kept ${temp}\n`);
    else rmSync(temp, { recursive: true, force: true });
  }
}

const { nodes, untested } = nodesToTest();
const packed = mkdtempSync(join(tmpdir(), "bulkcheck-packed-"));
try {
  let tarball;
  step("pack", () => {
    const [pack] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", packed], { cwd: root, env: process.env }).stdout);
    tarball = join(packed, pack.filename);
    const paths = pack.files.map((file) => file.path);
    const stray = paths.filter((path) => !SHIPPED.test(path) || NOT_SHIPPED.test(path));
    if (stray.length > 0) throw new Error(`the tarball holds files it should not: ${stray.join(", ")}`);
    const missing = REQUIRED.filter((path) => !paths.includes(path));
    if (missing.length > 0) throw new Error(`the tarball lacks ${missing.join(", ")}`);
    return `${pack.filename}, ${pack.files.length} files, ${(pack.size / 1e3).toFixed(0)} kB`;
  });
  for (const { path } of nodes) testOn(path, tarball);
} finally {
  rmSync(packed, { recursive: true, force: true });
}
const tested = nodes.map((node) => `Node ${node.major}`).join(", ");
if (untested.length === 0) process.stderr.write(`test-package: passed on ${tested}, every supported line\n`);
else
  process.stderr.write(
    `test-package: passed on ${tested}; not tested: Node ${untested.join(", ")} (no binary at hand: npm run node-lines fetches them)\n`,
  );

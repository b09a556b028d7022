// `npm run test:package [-- --node /path/to/node]`: the package as a user gets it. Packs it,
// installs the tarball globally into a temporary prefix, and from a directory outside the
// repository runs `bulkcheck --version`, `bulkcheck demo` (with a temporary HOME) and `validate` of a workbook, and
// finds the man page where `man bulkcheck` looks; then
// installs it into a temporary project, runs scripts/package-smoke.mjs there and compiles a
// TypeScript consumer of its declarations. Fails on any non-zero exit, on a peer-dependency,
// ERESOLVE or engines warning while installing, on a file in the tarball that should
// not be there, and on one that should be and is not.
//
// Another Node (NODE_BINARY=/path/to/node or --node /path/to/node) runs npm's installs and
// the installed command: its directory goes first on PATH, where their shebangs look.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { node: { type: "string" }, keep: { type: "boolean" } } });
const node = resolve(values.node ?? process.env.NODE_BINARY ?? process.execPath);
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const temp = mkdtempSync(join(tmpdir(), "bulkcheck-package-"));
const prefix = join(temp, "prefix");
const home = join(temp, "home");
const bulkcheck = join(prefix, "bin", "bulkcheck");
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(BULKCHECK_|XDG_|npm_)/i.test(name))),
  PATH: [dirname(node), join(prefix, "bin"), process.env.PATH].join(delimiter),
  HOME: home,
};
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

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: "utf8", env, cwd: temp, ...options });
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

function install(args, cwd) {
  const { output } = run("npm", ["install", ...args, "--no-audit", "--no-fund", "--prefer-offline"], { cwd });
  const warning = output.split("\n").find((line) => INSTALL_WARNING.test(line));
  if (warning) throw new Error(`installing printed a warning: ${warning}\n${output}`);
}

let tarball;
try {
  const used = run(node, ["--version"]).stdout.trim();
  process.stderr.write(`test-package: Node ${used} (${node})\n`);
  mkdirSync(home);

  step("pack", () => {
    const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", temp], { cwd: root, env: process.env }).stdout);
    tarball = join(temp, packed.filename);
    const paths = packed.files.map((file) => file.path);
    const stray = paths.filter((path) => !SHIPPED.test(path) || NOT_SHIPPED.test(path));
    if (stray.length > 0) throw new Error(`the tarball holds files it should not: ${stray.join(", ")}`);
    const missing = REQUIRED.filter((path) => !paths.includes(path));
    if (missing.length > 0) throw new Error(`the tarball lacks ${missing.join(", ")}`);
    return `${packed.filename}, ${packed.files.length} files, ${(packed.size / 1e3).toFixed(0)} kB`;
  });

  step("npm install -g into a temporary prefix", () => install(["-g", "--prefix", prefix, tarball], temp));

  step("bulkcheck --version", () => {
    const printed = run(bulkcheck, ["--version"]).stdout.trim();
    if (printed !== version) throw new Error(`bulkcheck --version printed ${JSON.stringify(printed)}, not ${version}`);
  });

  step("man bulkcheck: the page is installed where man looks", () => {
    const page = join(prefix, "share", "man", "man1", "bulkcheck.1");
    if (readFileSync(page, "utf8") !== readFileSync(join(root, "bulkcheck.1"), "utf8")) throw new Error(`${page} is not bulkcheck.1`);
  });

  step("bulkcheck demo", () => {
    run(bulkcheck, ["demo", "--dir", join(temp, "demo")]);
  });

  // A workbook as openpyxl (and so pandas) writes it, read by the installed reader (yauzl and saxes).
  const workbook = join(root, "test", "fixtures", "workbooks", "openpyxl.xlsx");
  step("bulkcheck validate of an Excel workbook", () => {
    const summary = JSON.parse(run(bulkcheck, ["validate", workbook, "--country", "GB", "--column", "mobile", "--json"]).stdout);
    if (summary.kept !== 6) throw new Error(`validate of a workbook of 6 distinct numbers kept ${summary.kept}`);
  });

  const project = join(temp, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  step("npm install of the tarball into a project", () => install([tarball], project));

  step('import from "bulkcheck" and "bulkcheck/sandbox"', () => {
    copyFileSync(join(root, "scripts", "package-smoke.mjs"), join(project, "smoke.mjs"));
    return run(node, ["smoke.mjs"], { cwd: project }).stdout.trim();
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
      { cwd: project },
    );
  });
  process.stderr.write("test-package: passed\n");
} finally {
  if (values.keep) process.stderr.write(`test-package: kept ${temp}\n`);
  else rmSync(temp, { recursive: true, force: true });
}

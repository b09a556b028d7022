// `npm run build` (run by prepack, `npm test` and `npm run demo`), from scratch, into a stage
// that replaces dist/ file by file once it is complete (move-into.mjs), so a built CLI stays
// usable while it runs:
//   dist/bundle/  what the package runs:
//                   bulkcheck.cjs    the CLI's start-up half, which bin/bulkcheck.js requires:
//                                    main, the command tree, help and error reporting
//                   bulkcheck-actions.cjs  the rest of the CLI, required when a command runs
//                   index.js, sandbox.js and their chunks: the `bulkcheck` and
//                                    `bulkcheck/sandbox` entries, ES modules
//                   classify-worker.js  the --threads worker, used by both
//                   record-worker.js    the worker that records a result in the ledger (ledger/recording.ts)
//                   classify-lines-worker.js  the sandbox's worker that classifies a big upload (sandbox/preparation.ts)
//   dist/types/   declarations of the two entries
//   dist/geo/     the sandbox's carrier and place names (build-geo-data.mjs)
//   dist/**       tsc's module tree, for tests and benchmarks; not in the package
//
// The CLI is CommonJS because Node 20 starts that ~3 ms sooner than the same code as
// ES-module chunks, most of the difference being the ES-module loader's own set-up
// (`status --help` 36.7 vs 39.4 ms, `node -e 0` 18.8 ms, medians of 60). It is two files
// (cli-bundles.mjs) so that `--help` and `--version` compile only the start-up half: V8
// compiling the one 848 KB file that held both was most of the start-up. Within each file
// the modules imported lazily stay unevaluated until used (esbuild wraps them), and so do
// the packages left in node_modules, required or imported where they are first used.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { writeGeoTables } from "./build-geo-data.mjs";
import { buildCliBundles } from "./cli-bundles.mjs";
import { moveInto, stageFor } from "./move-into.mjs";

const root = resolve(import.meta.dirname, "..");
const dist = join(root, "dist");
const stage = stageFor(dist);
const bundle = join(stage, "bundle");
const { dependencies } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** tsc with `project`'s settings, `flags` overriding where it writes (into the stage). */
function tsc(project, flags) {
  const bin = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const run = spawnSync(process.execPath, [bin, "-p", join(root, project), ...flags], { stdio: "inherit" });
  if (run.status !== 0) throw new Error(`build: tsc -p ${project} failed`);
}

const shared = {
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  target: "node20.18",
  outdir: bundle,
  // The package's dependencies stay in node_modules (their subpaths too); what the code imports
  // from devDependencies, commander, which every start runs, is bundled.
  external: Object.keys(dependencies),
  logLevel: "warning",
};

tsc("tsconfig.build.json", ["--outDir", stage]);
tsc("tsconfig.types.json", ["--declarationDir", join(stage, "types")]);
await buildCliBundles("src/main.ts", {
  ...shared,
  format: "cjs",
  // CommonJS has no import.meta.url, which code that finds files beside itself asks (the worker).
  define: { "import.meta.url": "bundleUrl" },
  banner: { js: 'const bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
});
await build({
  ...shared,
  entryPoints: {
    index: "src/index.ts",
    sandbox: "src/sandbox/index.ts",
    "classify-worker": "src/prepare/classify-worker.ts",
    "record-worker": "src/ledger/record-worker.ts",
    "classify-lines-worker": "src/sandbox/classify-lines-worker.ts",
  },
  format: "esm",
  splitting: true,
  chunkNames: "chunk-[hash]",
});
writeGeoTables(join(stage, "geo"));
moveInto(stage, dist);

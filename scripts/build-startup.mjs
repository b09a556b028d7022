// Builds dist/startup.cjs, the one file a start loads, and dist/startup.cache, V8's
// code cache for it (see bin/startup-loader.js). Run after tsc (npm run build).
//
// The bundle holds all of bulkcheck's own code and commander (a module both bundled and
// imported from dist/ would have two copies, and `instanceof` across them fails). Code
// loaded lazily only runs when first used, and V8 compiles a function only when first
// called, so a start pays for what it runs, not for the size of the bundle.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "..");
const dist = join(root, "dist");
const outfile = join(dist, "startup.cjs");
const loader = createRequire(import.meta.url)(join(root, "bin", "startup-loader.js"));
/** Bundled with bulkcheck's own code; other packages are required from node_modules when used. */
const BUNDLED_PACKAGES = /^(commander|@commander-js\/extra-typings)(\/|$)/;

/**
 * Packages stay in node_modules, but commander, which every start runs. ES-module-only
 * packages are all imported lazily, so their `import()` survives bundling.
 */
const packagesStayExternal = {
  name: "packages-stay-external",
  setup(bundle) {
    bundle.onResolve({ filter: /^[^./]/ }, ({ path }) => (path.startsWith("node:") || BUNDLED_PACKAGES.test(path) ? undefined : { path, external: true }));
  },
};

/** A module's own URL, as it would be in dist/, not the bundle's. */
const ownImportMetaUrl = {
  name: "own-import-meta-url",
  setup(bundle) {
    bundle.onLoad({ filter: /\.js$/ }, ({ path }) => {
      if (!path.startsWith(dist)) return undefined;
      const contents = readFileSync(path, "utf8").replaceAll("import.meta.url", `__bulkcheckUrl(${JSON.stringify(relative(dist, path))})`);
      return { contents, loader: "js" };
    });
  },
};

/** commander loads child_process for executable subcommands, which bulkcheck has none of: ~2.5 ms of every start. */
const lazyChildProcess = {
  name: "lazy-child-process",
  setup(bundle) {
    bundle.onResolve({ filter: /^(node:)?child_process$/ }, ({ importer }) =>
      importer.includes(join("node_modules", "commander")) ? { path: "child_process", namespace: "lazy-child-process" } : undefined,
    );
    bundle.onLoad({ filter: /.*/, namespace: "lazy-child-process" }, () => ({
      contents: 'let loaded; module.exports = { spawn: (...args) => (loaded ??= require("node:child_process")).spawn(...args) };',
      loader: "js",
    }));
  },
};

const { metafile } = await build({
  entryPoints: [join(dist, "main.js")],
  outfile,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  metafile: true,
  logLevel: "warning",
  banner: { js: 'const __bulkcheckUrl = (path) => require("node:url").pathToFileURL(require("node:path").join(__dirname, path)).href;' },
  plugins: [packagesStayExternal, ownImportMetaUrl, lazyChildProcess],
});

// Rename each lazy `import("…")` of a package to the loader's parameter, and make sure none is left.
const { imports } = metafile.outputs[relative(root, outfile)];
const lazy = new Set(imports.filter((entry) => entry.kind === "dynamic-import" && entry.external).map((entry) => entry.path));
let source = readFileSync(outfile, "utf8");
for (const path of lazy) {
  const call = `import(${JSON.stringify(path)})`;
  if (!source.includes(call)) throw new Error(`build-startup: ${call} not found in the bundle`);
  source = source.replaceAll(call, `${loader.IMPORT_PARAMETER}(${JSON.stringify(path)})`);
}
const leftover = source.match(/\bimport\s*\(/);
if (leftover) throw new Error(`build-startup: an import() the loader cannot serve is left at offset ${leftover.index}`);
writeFileSync(outfile, source);

// Warm the paths a start takes most (help, a command's help) in a fresh process, then cache.
const warm = spawnSync(
  process.execPath,
  ["-e", `require(${JSON.stringify(join(root, "bin", "startup-loader.js"))}).writeStartupCache([["--help"], ["status", "--help"]])`],
  { stdio: ["ignore", "ignore", "inherit"] },
);
if (warm.status !== 0) throw new Error(`build-startup: writing the code cache failed (exit ${warm.status})`);

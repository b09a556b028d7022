"use strict";
// Loads the CLI's start-up bundle (dist/startup.cjs, built by scripts/build-startup.mjs)
// with V8's code cache for it (dist/startup.cache), so a start compiles almost nothing.
// Node 20 has no module compile cache, and a vm.Script is the one way to hand V8 a
// cache. A missing bundle (a tsc-only build) falls back to the ES modules themselves.
const { existsSync, readFileSync, writeFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");
const vm = require("node:vm");

const DIST = join(__dirname, "..", "dist");
const BUNDLE = join(DIST, "startup.cjs");
const CACHE = join(DIST, "startup.cache");

/**
 * The bundle keeps lazily loaded modules as files; its `import()` calls are renamed to
 * this parameter, because a vm.Script's own `import()` needs --experimental-vm-modules.
 */
const IMPORT_PARAMETER = "__bulkcheckImport";

function compile(cachedData) {
  const source = readFileSync(BUNDLE, "utf8");
  const wrapped = `(function (exports, require, module, __filename, __dirname, ${IMPORT_PARAMETER}) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename: BUNDLE, cachedData });
  const module = { exports: {} };
  const base = pathToFileURL(BUNDLE);
  const load = (specifier) => import(specifier.startsWith(".") ? new URL(specifier, base).href : specifier);
  script.runInThisContext()(module.exports, createRequire(BUNDLE), module, BUNDLE, DIST, load);
  return { main: module.exports.main, script };
}

function readCache() {
  try {
    return readFileSync(CACHE);
  } catch {
    return undefined;
  }
}

/** The CLI's `main`. */
async function loadMain() {
  if (!existsSync(BUNDLE)) return (await import(pathToFileURL(join(DIST, "main.js")).href)).main;
  return compile(readCache()).main;
}

/**
 * Writes the code cache after running `main` on each of `argvs` (their output is the
 * caller's to discard): V8 caches the functions compiled by then, so the runs choose
 * what a start finds compiled.
 */
async function writeStartupCache(argvs) {
  const { main, script } = compile(undefined);
  for (const argv of argvs) await main(argv);
  writeFileSync(CACHE, script.createCachedData());
}

/** Whether V8 accepts the cache for the bundle as it is now. */
function startupCacheAccepted() {
  const cachedData = readCache();
  return cachedData !== undefined && compile(cachedData).script.cachedDataRejected === false;
}

module.exports = { IMPORT_PARAMETER, loadMain, writeStartupCache, startupCacheAccepted };

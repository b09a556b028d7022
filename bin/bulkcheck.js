#!/usr/bin/env node
"use strict";
// The only place that touches process exit state: main returns an exit code.

// A reader that stops early (`bulkcheck download ID | head`) closes the pipe: end
// quietly, as a SIGPIPE would, instead of crashing on EPIPE.
process.stdout.on("error", (error) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});

// Node 22.1+ keeps the compiled code of bulkcheck and its packages between runs, in the user's
// cache directory. Node's own default is the temp directory, shared by every user: one could
// create it first and hand another compiled code to run, and bulkcheck leaves nothing there.
// NODE_COMPILE_CACHE (Node then has the cache on already) and NODE_DISABLE_COMPILE_CACHE decide first.
const { enableCompileCache } = require("node:module");
if (enableCompileCache) {
  const { isAbsolute, join } = require("node:path");
  // As the XDG base directories say: a relative path is no place; without a home there is no cache.
  const absolute = (path) => (path && isAbsolute(path) ? path : undefined);
  const { XDG_CACHE_HOME, HOME } = process.env;
  const cacheHome = absolute(XDG_CACHE_HOME) ?? (absolute(HOME) && join(HOME, ".cache"));
  if (cacheHome) enableCompileCache(join(cacheHome, "bulkcheck", "node-compile-cache"));
}

let cli;
try {
  cli = require("../dist/bundle/bulkcheck.cjs");
} catch (error) {
  // A clone before its first build: say what to do rather than print a stack trace.
  if (error.code !== "MODULE_NOT_FOUND" || !error.message.split("\n")[0].includes("bulkcheck.cjs")) throw error;
  process.stderr.write("error: bulkcheck is not built here yet (dist/bundle/bulkcheck.cjs is missing).\nBuild it with: npm run build\n");
  process.exitCode = 2;
}

cli?.main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});

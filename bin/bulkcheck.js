#!/usr/bin/env node
"use strict";
// CommonJS (see bin/package.json): an ES-module entry costs every start ~5 ms of loader
// set-up. The only place that touches process exit state: main returns an exit code.

// A reader that stops early (`bulkcheck download ID | head`) closes the pipe: end
// quietly, as a SIGPIPE would, instead of crashing on EPIPE.
process.stdout.on("error", (error) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});

// Node 22.1+ can keep compiled code of the lazily loaded modules between runs.
require("node:module").enableCompileCache?.();

require("./startup-loader.js")
  .loadMain()
  .then((main) => main(process.argv.slice(2)))
  .then((code) => {
    process.exitCode = code;
  });

#!/usr/bin/env node
"use strict";
// The only place that touches process exit state: main returns an exit code.

// A reader that stops early (`bulkcheck download ID | head`) closes the pipe: end
// quietly, as a SIGPIPE would, instead of crashing on EPIPE.
process.stdout.on("error", (error) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});

// Node 22.1+ keeps the compiled code of bulkcheck and its packages between runs.
require("node:module").enableCompileCache?.();

require("../dist/bundle/bulkcheck.cjs")
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });

#!/usr/bin/env node
// The only place that touches process exit state: dist/main.js returns an exit code.

// A reader that stops early (`bulkcheck download ID | head`) closes the pipe: end
// quietly, as a SIGPIPE would, instead of crashing on EPIPE.
process.stdout.on("error", (error) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});

// Node 22.1+ can keep compiled code between runs (not measured here: this machine has Node 20, which lacks it).
const { enableCompileCache } = await import("node:module");
enableCompileCache?.();

const { main } = await import("../dist/main.js");
process.exitCode = await main(process.argv.slice(2));

#!/usr/bin/env node
// The only place that touches process exit state: dist/main.js returns an exit code.
import { main } from "../dist/main.js";

process.exitCode = await main(process.argv.slice(2));

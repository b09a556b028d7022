// `npm run docs` (which builds first): writes the command reference, docs/reference.md, and the man
// page, bulkcheck.1, from the command tree as dist/ holds it (src/cli/reference/), so neither can
// drift from `--help`; test/docs/reference.test.ts fails when the committed copies differ.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { generateReference } from "../dist/cli/reference/generate.js";

const root = resolve(import.meta.dirname, "..");
const { version, homepage } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

for (const [path, text] of Object.entries(generateReference({ version, homepage }))) {
  writeFileSync(join(root, path), text);
  process.stderr.write(`gen-docs: wrote ${path}\n`);
}

// The folder-level import graph of src/: each folder directly under src/ (api, cli, run, tasks…) is one
// node, each file directly in src/ is a node of its own, and an import from one node into another is
// an edge. `npm run lint` fails when that graph has a cycle, or when a folder imports one above it in
// LAYERS: dpdm (`npm run lint:cycles`) only sees cycles between files, and two folders importing each
// other through different files is how layers rot. Every import counts: static, type-only, re-exports
// and import().
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*)["'](\.{1,2}\/[^"']+)["']/gm;

/**
 * The layers of src/, top first: a folder may import the folders of the layers after its own, never
 * those before it or others of its own layer (CONTRIBUTING.md explains each). The sandbox and the
 * files directly in src/ are outside the order (ESLint keeps the sandbox to spec/ and csv/).
 */
export const LAYERS = [
  ["cli"],
  ["notify"],
  ["chain"],
  ["outputs"],
  ["report"],
  ["run"],
  ["ledger"],
  ["tasks"],
  ["store"],
  ["prepare"],
  ["results"],
  ["api"],
  ["config"],
  ["csv", "spec"],
];

/** Every .ts file under `dir`, recursively. */
function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The node of a file: its first folder under `root`, or the file itself when it sits in `root`. */
function nodeOf(root, file) {
  const parts = relative(root, file).split(sep);
  return parts.length === 1 ? parts[0].replace(/\.[jt]s$/, ".ts") : parts[0];
}

/** Edges between nodes, each with one import that makes it (to say where to look). */
export function folderGraph(root) {
  const edges = new Map();
  for (const file of sourceFiles(root)) {
    const from = nodeOf(root, file);
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const target = resolve(dirname(file), match[1]);
      if (relative(root, target).startsWith("..")) continue;
      const to = nodeOf(root, target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      if (!edges.get(from).has(to)) edges.get(from).set(to, `${relative(root, file)} imports ${match[1]}`);
    }
  }
  return edges;
}

/** The strongly connected components of more than one node (Tarjan), each a folder cycle. */
export function folderCycles(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  let next = 0;
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of edges.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** The edges that go up the layers (or across one), each as a line naming an import that makes it. */
export function layerViolations(edges, layers = LAYERS) {
  const layerOf = new Map(layers.flatMap((folders, index) => folders.map((folder) => [folder, index])));
  const lines = [];
  for (const [from, targets] of [...edges].sort()) {
    for (const [to, why] of targets) {
      if (!layerOf.has(from) || !layerOf.has(to) || layerOf.get(to) > layerOf.get(from)) continue;
      lines.push(`${from} imports ${to}, which is not below it (see LAYERS in scripts/folder-cycles.mjs): ${why}`);
    }
  }
  return lines;
}

/** One line per edge inside each cycle, naming an import that makes it. */
export function describeCycles(edges, cycles) {
  return cycles.map((members) => {
    const inside = new Set(members);
    const lines = members.flatMap((from) =>
      [...(edges.get(from) ?? new Map())].filter(([to]) => inside.has(to)).map(([to, why]) => `  ${from} → ${to}: ${why}`),
    );
    return `folders importing each other: ${members.join(", ")}\n${lines.join("\n")}`;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? "src");
  const edges = folderGraph(root);
  const problems = [...describeCycles(edges, folderCycles(edges)), ...layerViolations(edges)];
  if (problems.length > 0) {
    process.stderr.write(`${problems.join("\n")}\n`);
    process.exitCode = 1;
  }
}

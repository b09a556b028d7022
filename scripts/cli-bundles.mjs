// The CLI as two CommonJS files, so that `--help` and `--version` read and compile only the
// small one (V8 compiling the whole CLI was most of bulkcheck's start-up):
//   bulkcheck.cjs          the start-up half: src/main.ts and what it imports statically (the
//                          command tree, help, error reporting, commander)
//   bulkcheck-actions.cjs  what the start-up half's lazy `import()`s load (the commands'
//                          actions in src/cli/actions and the services) with everything below
//                          them; required when a command runs
// Every module is in exactly one of the two files (the build fails otherwise). Where the
// actions half imports a module of the start-up half (an error class failure.ts checks with
// instanceof, the exit codes, the printer), it takes that module from bulkcheck.cjs at run
// time instead of bundling a copy; a lazy import of the start-up half takes its module from
// bulkcheck-actions.cjs the same way. Each file exports `modules`, keyed by path: the
// start-up half the namespace of each module the other asks for (evaluated at start-up
// anyway), the actions half a loader that evaluates the module on first use, so within it the
// lazily imported modules stay unevaluated until used, as in one bundle. A module crosses as
// its namespace object, through esbuild's CommonJS interop, which would hand a default export
// over as the whole namespace: the build fails on one (src/ has named exports only).
// Only esbuild's public plugin API (onResolve, onLoad, build.resolve) and metafile are used.
import { relative, resolve } from "node:path";
import { build } from "esbuild";

const STARTUP_FILE = "bulkcheck.cjs";
const ACTIONS_FILE = "bulkcheck-actions.cjs";

/**
 * Builds both files into `options.outdir` from `entry` (src/main.ts, whose `main` the
 * start-up file exports); `options` are the bundle settings (format, externals, defines).
 */
export async function buildCliBundles(entry, options) {
  const { startup, lazy } = await startupHalf(entry, options);
  const fromStartup = new Set();
  const actions = await build({
    ...options,
    ...entryOf(options, ACTIONS_FILE, `export const modules = {\n${lazy.map((path) => `  ${loader(options, path)},`).join("\n")}\n};\n`),
    plugins: [linkTo(STARTUP_FILE, (path) => startup.has(path), fromStartup)],
  });
  const shared = [...fromStartup];
  const startupBuild = await build({
    ...options,
    ...entryOf(
      options,
      STARTUP_FILE,
      [
        ...shared.map((path, index) => `import * as shared${index} from ${JSON.stringify(fromRoot(options, path))};`),
        `export { main } from ${JSON.stringify(fromRoot(options, entry))};`,
        `export const modules = {\n${shared.map((path, index) => `  ${JSON.stringify(relative(options.absWorkingDir, path))}: () => shared${index},`).join("\n")}\n};\n`,
      ].join("\n"),
    ),
    plugins: [linkTo(ACTIONS_FILE, (path, kind) => kind === "dynamic-import" && lazy.includes(path), new Set())],
  });
  const inStartup = new Set(bundled(startupBuild));
  const twice = bundled(actions).filter((path) => inStartup.has(path));
  if (twice.length > 0) throw new Error(`build: in both CLI bundles: ${twice.join(", ")}`);
  await refuseDefaultExports([...shared, ...lazy], options);
}

/**
 * The start-up half: the modules `entry` reaches through static imports (absolute paths), and
 * those its lazy imports load that are not among them, the actions half's entries.
 */
async function startupHalf(entry, options) {
  const lazy = new Set();
  const { metafile } = await build({
    ...options,
    entryPoints: [entry],
    write: false,
    metafile: true,
    plugins: [
      {
        name: "find-lazy-imports",
        setup(pluginBuild) {
          onResolveTo(pluginBuild, (path, kind) => {
            if (kind !== "dynamic-import") return undefined;
            lazy.add(path);
            return { path, external: true };
          });
        },
      },
    ],
  });
  const startup = new Set(Object.keys(metafile.inputs).map((path) => resolve(options.absWorkingDir, path)));
  return { startup, lazy: [...lazy].filter((path) => !startup.has(path)) };
}

/** Build options for the file `name` in `options.outdir`, from an entry module whose source is `contents`. */
function entryOf(options, name, contents) {
  return {
    stdin: { contents, resolveDir: options.absWorkingDir, sourcefile: name, loader: "js" },
    outdir: undefined,
    outfile: resolve(options.outdir, name),
    metafile: true,
  };
}

/** A property of `modules` that evaluates the module at `path` and returns what require() would. */
function loader(options, path) {
  return `${JSON.stringify(relative(options.absWorkingDir, path))}: () => require(${JSON.stringify(fromRoot(options, path))})`;
}

function fromRoot(options, path) {
  return `./${relative(options.absWorkingDir, resolve(options.absWorkingDir, path))}`;
}

/**
 * An esbuild plugin: an import of a module for which `belongsThere(path, kind)` holds becomes
 * a small module that requires `file` (the other half, beside this one) and takes the module
 * from its `modules`. Adds the absolute paths of the modules it links to `linked`.
 */
function linkTo(file, belongsThere, linked) {
  const namespace = `in-${file}`;
  return {
    name: `link-to-${file}`,
    setup(pluginBuild) {
      const root = pluginBuild.initialOptions.absWorkingDir;
      onResolveTo(pluginBuild, (path, kind) => {
        if (!belongsThere(path, kind)) return undefined;
        linked.add(path);
        return { path: relative(root, path), namespace };
      });
      pluginBuild.onResolve({ filter: /.*/, namespace }, (args) => ({ path: args.path, external: true }));
      pluginBuild.onLoad({ filter: /.*/, namespace }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(`./${file}`)}).modules[${JSON.stringify(args.path)}]();\n`,
        loader: "js",
      }));
    },
  };
}

/**
 * Calls `decide(path, kind)` for each import of a file esbuild bundles, with the absolute path
 * the import resolves to; what `decide` returns is the import's resolution, undefined leaves it
 * to esbuild. Packages left external are not asked about.
 */
function onResolveTo(pluginBuild, decide) {
  pluginBuild.onResolve({ filter: /.*/, namespace: "file" }, async (args) => {
    if (args.pluginData?.resolving || args.kind === "entry-point") return undefined;
    const { kind, importer, resolveDir } = args;
    const resolved = await pluginBuild.resolve(args.path, { kind, importer, resolveDir, pluginData: { resolving: true } });
    if (resolved.errors.length > 0 || resolved.external) return undefined;
    return decide(resolved.path, kind);
  });
}

/** The files a build bundled, by path from the root (not the entry, nor the modules it links). */
function bundled(result) {
  return Object.keys(result.metafile.inputs).filter((path) => !path.includes(":") && path !== "<stdin>");
}

/** Fails on a default export among `paths` (a CommonJS package counts as one): see the header. */
async function refuseDefaultExports(paths, options) {
  const { metafile } = await build({
    absWorkingDir: options.absWorkingDir,
    entryPoints: paths,
    outdir: options.outdir,
    write: false,
    metafile: true,
    format: "esm",
    platform: "node",
    logLevel: options.logLevel,
  });
  const withDefault = Object.values(metafile.outputs).filter((output) => output.exports.includes("default"));
  if (withDefault.length > 0)
    throw new Error(
      `build: shared between the CLI bundles, these have a default export: ${withDefault.map((output) => output.entryPoint).join(", ")}`,
    );
}

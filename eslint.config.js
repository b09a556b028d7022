// ESLint: the recommended JavaScript rules and typescript-eslint's type-checked ones. Formatting
// is Prettier's job (`npm run format`), so there are no stylistic rules here.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

/** The library folders of src/: they return values, emit events or throw typed errors, and never reach into cli/. */
const LIBRARY_FOLDERS = [
  "api",
  "prepare",
  "results",
  "config",
  "sandbox",
  "tasks",
  "csv",
  "run",
  "store",
  "ledger",
  "report",
  "spec",
  "notify",
  "outputs",
  "chain",
];

const NO_CLI = {
  group: ["**/cli", "**/cli/**"],
  message: "A library folder never imports cli/: return a value, emit an event or throw a typed error, and let the command print it.",
};

/**
 * The sandbox emulates the service, so it must not share the client's preparation: outside
 * sandbox/ it reaches only spec/, csv/ (neither imports prepare/), errors.ts and package-files.ts,
 * so no chain of imports leads from it to prepare/. `up` is the "../" that leaves sandbox/.
 */
function sandboxOnly(up) {
  return {
    regex: `^${up.replaceAll(".", "\\.")}(?!spec/|csv/|errors\\.js$|package-files\\.js$)`,
    message:
      "The sandbox imports only sandbox/, spec/, csv/, errors.ts and package-files.ts: never prepare/, which it must not share with the client.",
  };
}

/**
 * A store's engines (SQLite, PostgreSQL, the recording of results into either) are store/'s own:
 * every other folder opens a store through store/open.ts and uses its parts (Store, Ledger).
 */
const NO_ENGINE = {
  group: ["**/store/sqlite-*", "**/store/postgres-*", "**/store/result-recording*"],
  message: "Only store/ names an engine's module: open a store with store/open.ts and use the Store and Ledger interfaces.",
};
const ENGINE_MODULE = "(^|\\/)store\\/(sqlite-|postgres-|result-recording)";

/** cli/views/ shows library values and events; the actions and their shared/ use it, never the reverse. */
const NO_ACTIONS = {
  group: ["**/actions", "**/actions/**"],
  message: "cli/views/ only draws: it never imports cli/actions/ (flags turned into requests), which imports it.",
};

/**
 * Folders below others, by what they must never import: a lower layer knows nothing of the
 * ones built on it (the whole order is in CONTRIBUTING.md; scripts/folder-cycles.mjs fails on
 * any folder cycle these rules leave possible).
 */
const LOWER_LAYERS = {
  tasks: {
    folders: ["run", "outputs"],
    message: "tasks/ is one step with the service; the run (run/) and its outputs (outputs/) are built on it, never the reverse.",
  },
  results: {
    folders: ["prepare", "outputs"],
    message:
      "results/ is result files and the file formats prepare/ reads lists with (zip, workbook XML, atomic files): it never imports prepare/; joining results to a list is outputs/'s.",
  },
  prepare: { folders: ["outputs"], message: "prepare/ reads lists; outputs/ (the join) reads them again, never the reverse." },
  ledger: {
    folders: ["run", "outputs"],
    message: "ledger/ keeps results; the run (run/) and its outputs (outputs/) use it, never the reverse.",
  },
  run: { folders: ["outputs"], message: "outputs/ writes what a run fetched; run/ never imports it." },
};

/** The same rules for dynamic import(), which no-restricted-imports does not see. */
function noDynamic(pattern, message) {
  return { selector: `ImportExpression[source.value=/${pattern}/]`, message };
}

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "bench/data/", "coverage/", ".node-lines/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      // Rethrowing what a catch caught is how errors travel; it is `unknown` by the language's rules.
      "@typescript-eslint/only-throw-error": ["error", { allowThrowingUnknown: true }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    files: LIBRARY_FOLDERS.map((folder) => `src/${folder}/**/*.ts`),
    ignores: ["src/store/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [NO_CLI, NO_ENGINE] }],
      "no-restricted-syntax": ["error", noDynamic("(^|\\/)cli\\/", NO_CLI.message), noDynamic(ENGINE_MODULE, NO_ENGINE.message)],
    },
  },
  {
    files: ["src/store/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [NO_CLI] }],
      "no-restricted-syntax": ["error", noDynamic("(^|\\/)cli\\/", NO_CLI.message)],
    },
  },
  {
    files: ["src/cli/**/*.ts", "src/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [NO_ENGINE] }],
      "no-restricted-syntax": ["error", noDynamic(ENGINE_MODULE, NO_ENGINE.message)],
    },
  },
  {
    files: ["src/cli/views/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [NO_ENGINE, NO_ACTIONS] }],
      "no-restricted-syntax": ["error", noDynamic(ENGINE_MODULE, NO_ENGINE.message), noDynamic("(^|\\/)actions\\/", NO_ACTIONS.message)],
    },
  },
  ...Object.entries(LOWER_LAYERS).map(([folder, { folders, message }]) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [NO_CLI, NO_ENGINE, { group: folders.flatMap((above) => [`**/${above}`, `**/${above}/**`]), message }] },
      ],
      "no-restricted-syntax": [
        "error",
        noDynamic("(^|\\/)cli\\/", NO_CLI.message),
        noDynamic(ENGINE_MODULE, NO_ENGINE.message),
        noDynamic(`(^|\\/)(${folders.join("|")})\\/`, message),
      ],
    },
  })),
  {
    files: ["src/sandbox/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [NO_CLI, sandboxOnly("../")] }],
      "no-restricted-syntax": ["error", noDynamic("(^|\\/)(cli|prepare)\\/", sandboxOnly("../").message)],
    },
  },
  {
    files: ["src/sandbox/*/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [NO_CLI, sandboxOnly("../../")] }],
      "no-restricted-syntax": ["error", noDynamic("(^|\\/)(cli|prepare)\\/", sandboxOnly("../../").message)],
    },
  },
  {
    files: ["src/spec/**/*.ts", "src/csv/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            NO_CLI,
            { group: ["**/prepare", "**/prepare/**"], message: "The sandbox imports spec/ and csv/, so they never import prepare/." },
          ],
        },
      ],
    },
  },
  {
    // Tests fake async interfaces with plain functions and read JSON they just wrote.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
    },
  },
  {
    // Scripts, benchmarks and the bin are plain JavaScript: no type information to check against.
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    extends: [tseslint.configs.disableTypeChecked],
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);

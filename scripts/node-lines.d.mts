// Types of scripts/node-lines.mjs for the test suite (test/scripts/node-lines.test.ts).

/** The Node.js lines bulkcheck supports, lowest first; the lowest is package.json's `engines`. */
export declare const SUPPORTED_LINES: number[];
/** Where `npm run node-lines` installs the binaries. */
export declare const NODE_LINES_DIR: string;
/** The major version of the Node binary at `path`, or undefined when it does not run. */
export declare function majorOf(path: string): number | undefined;
/** The supported lines installed in .node-lines, each with its binary's path. */
export declare function installedLines(): Array<{ line: number; path: string }>;
/** Installs `line` from npm (unless it is there already) and returns its binary. */
export declare function install(line: number): string;

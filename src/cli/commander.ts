import { createRequire } from "node:module";
import type * as Commander from "@commander-js/extra-typings";

/**
 * commander, loaded as the CommonJS module it is. Importing it as ESM makes Node
 * scan the package for named exports first, which costs about 10 ms of every
 * start; the types still come from @commander-js/extra-typings.
 */
const commander = createRequire(import.meta.url)("@commander-js/extra-typings") as typeof Commander;

export const { Command, Option, InvalidArgumentError, CommanderError } = commander;
export type { CommandUnknownOpts } from "@commander-js/extra-typings";

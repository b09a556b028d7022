/** commander with @commander-js/extra-typings' types (the bundle in dist/startup.cjs includes it). */
export { Command, Help, Option, InvalidArgumentError, CommanderError } from "@commander-js/extra-typings";
export type { CommandUnknownOpts, OptionValues } from "@commander-js/extra-typings";

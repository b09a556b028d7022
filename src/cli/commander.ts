/** commander with @commander-js/extra-typings' types (the CLI bundle, dist/bundle/bulkcheck.cjs, includes it). */
export { Command, Help, Option, InvalidArgumentError, CommanderError } from "@commander-js/extra-typings";
export type { CommandUnknownOpts, OptionValues } from "@commander-js/extra-typings";

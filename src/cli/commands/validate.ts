import { Command } from "../commander.js";
import { parseOutputPath } from "../parse-flags.js";
import type { Invoke } from "../context.js";
import { digitsAsOption, encodingOption, examples, safeCsvOption, sheetOption, threadsOption } from "./shared/help.js";
import type { validateAction } from "../actions/validate.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/validate.js");

/** `bulkcheck validate <file>`. Tests pass their own `act` to see what the flags parse into. */
export function validateCommand(invoke: Invoke, act: typeof validateAction = async (...args) => (await actions()).validateAction(...args)) {
  return new Command("validate")
    .description("prepare a list locally (no network, no key): summary, upload list, rejects")
    .argument("<file>", "list to check (.txt, .csv, .tsv, .xlsx), or - for stdin")
    .option("--country <CC>", "ISO 3166-1 country of the numbers, or auto to keep valid numbers of every country")
    .option("--default-country <CC>", "with --country auto: the country of numbers written without their country code")
    .option("--type <service_type>", "product (carrier_batch allows no --country)")
    .option("--column <name|index>", "phone column of a CSV or workbook (name, or 1-based index)")
    .option("--require-country-code", "exclude numbers written without their country code")
    .option("--strict-region", "exclude regions that only share the calling code")
    .option("-o, --output <file>", "write the normalised upload list here (- for stdout)", parseOutputPath)
    .option("--rejects <file>", "write every excluded row to this CSV (- for stdout)", parseOutputPath)
    .addOption(safeCsvOption())
    .addOption(sheetOption())
    .addOption(digitsAsOption())
    .addOption(encodingOption())
    .addOption(threadsOption())
    .option("--force", "overwrite output files")
    .addHelpText(
      "after",
      examples([
        "bulkcheck validate crm.csv --country GB -o upload.txt --rejects rejects.csv",
        "bulkcheck validate list.txt --country GB --json",
        "bulkcheck validate crm.xlsx --country GB --sheet Contacts --rejects rejects.csv",
      ]),
    )
    .action((file, options, cmd) => invoke(cmd, (ctx) => act(ctx, file, options)));
}

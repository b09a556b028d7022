import { Command, Option } from "../commander.js";
import type { Invoke } from "../context.js";
import {
  addNotifyOptions,
  addReserveAndWaitOptions,
  digitsAsOption,
  encodingOption,
  examples,
  safeCsvOption,
  sheetOption,
  threadsOption,
} from "./shared/help.js";
import { parseAge, parseOutputPath } from "../parse-flags.js";
import type { submitAction } from "../actions/submit.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/submit.js");

/** `bulkcheck submit <file>`. Tests pass their own `act` to see what the flags parse into. */
export function submitCommand(invoke: Invoke, act: typeof submitAction = async (...args) => (await actions()).submitAction(...args)) {
  const command = new Command("submit")
    .description("prepare a list locally and submit it as one or more tasks")
    .argument("<file>", "list to check (.txt, .csv, .tsv, .xlsx), or - for stdin")
    .requiredOption(
      "--type <service_type>",
      "product: number_validation_batch, number_activity_batch, number_high_value_batch, number_ecommerce_batch, carrier_batch",
    )
    .option(
      "--country <CC>",
      "ISO 3166-1 country of the numbers (optional only for carrier_batch), or auto: one task per country of a mixed list",
    )
    .option("--default-country <CC>", "with --country auto: the country of numbers written without their country code")
    .option("--column <name|index>", "phone column of a CSV or workbook (name, or 1-based index)")
    .option("--require-country-code", "exclude numbers written without their country code, as the service does")
    .option("--strict-region", "exclude regions that only share the calling code (e.g. GG/JE/IM for GB)")
    .option("--rejects <file>", "write every excluded row to this CSV (- for stdout; task ids then go to stderr)", parseOutputPath)
    .addOption(safeCsvOption())
    .addOption(sheetOption())
    .addOption(digitsAsOption())
    .addOption(encodingOption())
    .addOption(threadsOption())
    .option("--idempotency-key <key>", "use this key (numbered when split) instead of the ones derived from the run")
    .option("--resubmit", "no longer needed: a finished run's list is checked again by the next run (accepted and ignored)")
    .option(
      "--max-age <age>",
      "reuse ledger results younger than this instead of checking again: 0, 90s, 12h, 7d (default: config max-age, 12h)",
      parseAge,
    )
    .option("--no-ledger", "keep no result of this run in the ledger, and reuse none")
    .option(
      "--retry-no-result",
      "also upload the numbers the service checked without a result within --max-age (not uploaded again by default)",
    )
    .addOption(
      new Option(
        "--pad <policy>",
        "numbers that need a result but are too few for a task: oldest fills the task with the oldest fresh results (shown with its cost first), never lets them wait for a later run (default: config pad, oldest)",
      ).choices(["oldest", "never"] as const),
    )
    .option("--dry-run", "prepare and show the plan and cost; upload nothing")
    .option(
      "--then <product[:column=value,...]>",
      "with --wait: then check another product too, on every number or only where an earlier product's result has one of the values in that column (e.g. number_activity_batch:number_type=mobile); repeatable (see docs/chains.md)",
      (value: string, earlier: string[] = []) => [...earlier, value],
    );
  return addNotifyOptions(addReserveAndWaitOptions(command), "with --wait: ")
    .option("--join", "with --wait -o: write the source rows with the result columns beside them")
    .option("--report <file.html>", "with --wait: also write an HTML report of the run (self-contained, printable)", parseOutputPath)
    .option(
      "--changes <file>",
      "with --wait: write the numbers whose result changed since their previous check (CSV, or .xlsx; - for stdout; the header alone when none did)",
      parseOutputPath,
    )
    .option(
      "--changes-appeared-left",
      "with --changes: also a row for each number that appeared in the list or left it since its previous check (column (appeared) or (left))",
    )
    .option(
      "--changes-summary",
      "with --wait: say how many numbers changed, appeared and left since the previous check of the list, even with --quiet",
    )
    .option(
      "--exit-on-change",
      "with --wait: exit 11 when the run succeeded and something changed since the previous check of the list (a result, a number that appeared or left)",
    )
    .addHelpText(
      "after",
      examples([
        "bulkcheck submit list.csv --type carrier_batch --country GB",
        "ID=$(bulkcheck submit list.txt --type number_validation_batch --country GB --yes)",
        "bulkcheck submit crm.csv --type number_activity_batch --country GB --wait --join -o checked.csv",
        "bulkcheck submit crm.csv --type carrier_batch --country GB --then number_activity_batch:number_type=mobile --wait --join -o out.csv",
        "bulkcheck submit crm.xlsx --type number_activity_batch --country auto --default-country GB --dry-run",
        "bulkcheck submit crm.csv --type number_activity_batch --country GB --yes --wait --quiet --exit-on-change --notify https://hooks.example.com/bulkcheck",
      ]),
    )
    .action((file, options, cmd) => invoke(cmd, (ctx) => act(ctx, file, options)));
}

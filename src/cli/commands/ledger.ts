import { Command, Option, type OptionValues } from "../commander.js";
import type { Invoke } from "../context.js";
import { parseAge, parseOutputPath } from "../parse-flags.js";
import { examples } from "./shared/help.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/ledger.js");

function numbersCommand(name: string, description: string, exampleLines: string[]) {
  return new Command(name)
    .description(description)
    .addHelpText("after", examples(exampleLines))
    .argument("<numbers...>", "phone numbers in any written form, or - to read them from stdin (one per line)")
    .option("--country <CC>", "the country of numbers written without their country code")
    .option("--product <service_type>", "only this product's results");
}

/** What forget and prune share: say what would go, and the confirmation a shared store asks for. */
function erasureOptions<Args extends unknown[], Opts extends OptionValues>(command: Command<Args, Opts>) {
  return command
    .option("--dry-run", "say what would be erased, and erase nothing")
    .option("-y, --yes", "erase from a shared (PostgreSQL) store without asking (needed there where no one can answer: cron, pipes, CI)");
}

/** What "no trace" means on each engine (docs/files-and-security.md says it at length). */
const NO_TRACE_HELP = `What is left afterwards:
  SQLite (the local store): no byte of the numbers in the database file or its
    write-ahead log (erased rows are overwritten, the log emptied).
  PostgreSQL: the rows are deleted, then the tables holding numbers and their
    indexes are rewritten (VACUUM FULL): no byte of the numbers is left in
    their files. Other machines wait for those tables meanwhile (some 13 s
    per million results). The server's write-ahead log, replicas and backups
    keep them until recycled (its administrator's to manage). VACUUM needs the
    tables' owner: for another user it is skipped, with a warning.
  Staged results of unfinished runs: rewritten without those rows.
  Runs open now (killed, or still running) could fetch those numbers' results
    again: the store keeps a hash of each number (HMAC-SHA-256, not the digits)
    until every run open now has ended. Until then those runs, carried on,
    never record the numbers nor write their results (-o, --join, --report,
    --changes): they count as numbers without a result.
  Upload files in the temp directory: a killed run's are removed. A run still
    running, or carried on from a list that still holds the numbers, keeps its
    own (the list's numbers) until it ends.
  Your own files (-o outputs, exports, reports) are not touched.`;

/** `bulkcheck ledger …`: what the ledger holds, and erasing from it. */
export function ledgerCommand(invoke: Invoke) {
  const command = new Command("ledger")
    .description("the results bulkcheck has downloaded, with when each was checked: stats, lookup, forget, prune, export")
    .addHelpText(
      "after",
      examples([
        "bulkcheck ledger stats",
        "bulkcheck ledger lookup '+44 7400 123456' 07400123457 --country GB",
        "bulkcheck ledger forget 447400123456",
        "bulkcheck ledger prune --older-than 180d",
        "bulkcheck ledger export --product carrier_batch -o ledger.csv",
      ]),
    );
  command.addCommand(
    new Command("stats")
      .description("how many results and numbers, from when to when, per product and service, and the size on disk")
      .addHelpText("after", examples(["bulkcheck ledger stats", "bulkcheck ledger stats --json"]))
      .action((_o, cmd) => invoke(cmd, async (ctx) => (await actions()).ledgerStatsAction(ctx))),
  );
  command.addCommand(
    numbersCommand("lookup", "show the stored results of these numbers, newest first", [
      "bulkcheck ledger lookup '+44 7400 123456' 07400123457 --country GB",
      "cut -d, -f1 numbers.csv | bulkcheck ledger lookup - --json",
    ]).action((numbers, options, cmd) => invoke(cmd, async (ctx) => (await actions()).ledgerLookupAction(ctx, numbers, options))),
  );
  command.addCommand(
    erasureOptions(
      numbersCommand(
        "forget",
        "erase every stored result of these numbers: from the store, this machine's local store and results unfinished runs staged",
        [
          "bulkcheck ledger forget 447400123456 --dry-run",
          "bulkcheck ledger forget 447400123456",
          "bulkcheck ledger forget - --yes < erasure-requests.txt",
        ],
      ),
    )
      .addHelpText("after", NO_TRACE_HELP)
      .action((numbers, options, cmd) => invoke(cmd, async (ctx) => (await actions()).ledgerForgetAction(ctx, numbers, options))),
  );
  command.addCommand(
    erasureOptions(
      new Command("prune")
        .description("remove results checked longer ago than this (default: the ledger-retention setting), staged ones included")
        .option("--older-than <age>", "an age: 90d, 12h, 180d (a number alone is seconds)", parseAge),
    )
      .addHelpText(
        "after",
        examples(["bulkcheck ledger prune --older-than 180d --dry-run", "bulkcheck ledger prune --older-than 90d --yes --json"]),
      )
      .action((options, cmd) => invoke(cmd, async (ctx) => (await actions()).ledgerPruneAction(ctx, options))),
  );
  command.addCommand(
    new Command("export")
      .description("write the stored results as CSV, TSV, JSON lines, JSON or an Excel workbook")
      .option("-o, --output <file>", "destination file, or - for stdout (default: stdout)", parseOutputPath)
      .addOption(
        new Option("--format <format>", "output format (default csv, xlsx for -o FILE.xlsx)").choices([
          "csv",
          "tsv",
          "jsonl",
          "json",
          "xlsx",
        ] as const),
      )
      .option("--product <service_type>", "only this product's results")
      .option("--since <age>", "only results checked within this age: 7d, 12h", parseAge)
      .option("--force", "replace an existing file")
      .addHelpText(
        "after",
        examples(["bulkcheck ledger export --product carrier_batch -o ledger.csv", "bulkcheck ledger export --since 7d --format jsonl"]),
      )
      .action((options, cmd) => invoke(cmd, async (ctx) => (await actions()).ledgerExportAction(ctx, options))),
  );
  return command;
}

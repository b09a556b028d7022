import { FORCEABLE_ENCODINGS } from "../../../csv/encodings.js";
import { Option, type Command, type OptionValues } from "../../commander.js";
import { parseCountOrZero, parseOutputPath, parsePositiveSeconds, parseSeconds, parseUsd } from "../../parse-flags.js";

/** The "Examples:" block of a command's help. */
export function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}\n`;
}

/** --format of the commands that write results (submit --wait -o, download). */
export function formatOption() {
  return new Option("--format <format>", "output format (default csv, xlsx for -o FILE.xlsx; jsonl with --json on stdout)").choices([
    "csv",
    "tsv",
    "jsonl",
    "json",
    "table",
    "xlsx",
  ] as const);
}

/** --threads of the commands that prepare a list (submit, validate). */
export function threadsOption() {
  return new Option(
    "--threads <n>",
    "classify on this many worker threads (default 0: in this thread; 30–65 MB each, worth it only for lists that need the full parse)",
  ).argParser(parseCountOrZero);
}

/** --digits-as of the commands that prepare a list. */
export function digitsAsOption() {
  return new Option(
    "--digits-as <reading>",
    "read digits valid both with their country code and as a national number (two numbers) this way (default: as most of the list)",
  ).choices(["international", "national"] as const);
}

/** --encoding of the commands that prepare a list. */
export function encodingOption() {
  return new Option(
    "--encoding <encoding>",
    "read the list in this encoding (default: its BOM's, UTF-8 if valid, else windows-1252)",
  ).choices(FORCEABLE_ENCODINGS);
}

/** --sheet of the commands that prepare a list. */
export function sheetOption() {
  return new Option(
    "--sheet <name|n>",
    "sheet of an Excel workbook to read: its name, or its number from 1 (default: the first visible worksheet)",
  );
}

/**
 * --safe-csv of the commands that write the user's own cells into CSV (joins, --rejects):
 * the service's values are always neutralised; this neutralises the source's too.
 */
export function safeCsvOption() {
  return new Option(
    "--safe-csv",
    "also neutralise the source's own cells that a spreadsheet would run as a formula (=, +, -, @ …), with a ' in front",
  );
}

/** How every duration flag's help says its unit (config/duration.ts reads them all). */
export const DURATION_UNITS = "seconds, or with a unit: 90s, 15m, 12h";

/** --timeout of every command that talks to the service: one bound on the whole run, from its start. */
export function timeoutOption() {
  return new Option(
    "--timeout <sec>",
    `give up after this long, whatever the command is doing: reading a list, requests in flight (exit 8); ${DURATION_UNITS}`,
  ).argParser(parseSeconds);
}

/** --request-timeout of every command that talks to the service. */
export function requestTimeoutOption() {
  return new Option(
    "--request-timeout <sec>",
    `longest wait for a response to start, and for an answer's body; a result file must keep up 1 KiB/s over this long (default 60; ${DURATION_UNITS})`,
  ).argParser(parsePositiveSeconds);
}

/** --interval of the commands that wait for tasks (wait, and submit/retry-failed --wait). */
export function intervalOption(what = "between checks") {
  return new Option("--interval <sec>", `time ${what} (min 30 s unless the service is local; ${DURATION_UNITS})`).argParser(parseSeconds);
}

/** The flags of the commands that reserve new tasks and may wait for them (submit, retry-failed). */
export function addReserveAndWaitOptions<Args extends unknown[], Opts extends OptionValues>(command: Command<Args, Opts>) {
  return command
    .option("-y, --yes", "reserve without asking (needed where no one can answer: cron, pipes, CI)")
    .option("--max-cost <usd>", "stop if the reservation would exceed this many USD", parseUsd)
    .option("--wait", "wait for the tasks to finish")
    .addOption(intervalOption("between checks while waiting"))
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .option("-o, --output <file>", "with --wait: download the results here (- for stdout)", parseOutputPath)
    .addOption(formatOption())
    .option("--force", "overwrite the output file")
    .addOption(
      new Option(
        "--if-busy <what>",
        "when another bulkcheck process is carrying on this run: wait for it, then carry on (default), or exit 10",
      )
        .choices(["wait", "exit"])
        .default("wait"),
    );
}

/**
 * The flags of the commands that tell someone when they end (submit and retry-failed with
 * --wait, wait, download); main runs what they ask for once the command has ended, as it
 * does for every such command (see cli/notifications.ts and docs/notifications.md).
 */
export function addNotifyOptions<Args extends unknown[], Opts extends OptionValues>(command: Command<Args, Opts>, only = "") {
  return command
    .option(
      "--on-done <command>",
      `${only}when the command ends, succeeded or not: run this (no shell: sh -c '…' for one), with the outcome in BULKCHECK_* variables and as JSON on stdin; at most 60 s and within --timeout, never changing the exit code (default: config on-done)`,
    )
    .option("--no-on-done", "run no --on-done command, not even the profile's")
    .option(
      "--notify <url>",
      `${only}when the command ends: POST its summary to this http(s) URL, signed as Standard Webhooks says with config webhook-secret, retried on 5xx and timeouts within --timeout (default: config notify)`,
    )
    .option("--no-notify", "post no notification, not even to the profile's URL")
    .addOption(
      new Option(
        "--notify-format <format>",
        "standard: the signed JSON summary (default: config notify-format); slack: a text message for a Slack or Teams incoming webhook, unsigned",
      ).choices(["standard", "slack"] as const),
    );
}

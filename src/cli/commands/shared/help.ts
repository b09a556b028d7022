import { Option } from "../../commander.js";
import { parseCountOrZero, parsePositiveSeconds, parseSeconds } from "../../parse-flags.js";

/** The "Examples:" block of a command's help. */
export function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}\n`;
}

/** --format of the commands that write results (submit --wait -o, download). */
export function formatOption() {
  return new Option("--format <format>", "output format (default csv; jsonl with --json on stdout)").choices([
    "csv",
    "tsv",
    "jsonl",
    "json",
    "table",
  ] as const);
}

/** --threads of the commands that prepare a list (submit, validate). */
export function threadsOption() {
  return new Option(
    "--threads <n>",
    "classify on this many worker threads (default 0: in this thread; 30–65 MB each, worth it only for lists that need the full parse)",
  ).argParser(parseCountOrZero);
}

/** --timeout of every command that talks to the service: one bound on the whole run. */
export function timeoutOption() {
  return new Option("--timeout <sec>", "give up after this many seconds, requests in flight included (exit 8)").argParser(parseSeconds);
}

/** --request-timeout of every command that talks to the service. */
export function requestTimeoutOption() {
  return new Option(
    "--request-timeout <sec>",
    "longest wait for a response to start, and for an answer's body (default 60; result files: between chunks)",
  ).argParser(parsePositiveSeconds);
}

import { exitCodesHelp, jsonErrorCodes, wrapWords } from "./exit-codes.js";

/**
 * `bulkcheck help <topic>`: what a person looks up rather than a command's
 * flags. Each topic is plain text for stdout, at most 80 columns wide.
 */
export const HELP_TOPICS = {
  "exit-codes": {
    summary: "what each exit code means (for scripts and cron)",
    text: () =>
      `${exitCodesHelp()}

A run that succeeds with --quiet prints nothing but the data asked for (task
ids without -o, results with -o -), so cron mails only failures. With --json,
a failure is also one JSON object on the last line of stderr:
  {"error": {"code": "auth", "exit_code": 4, "message": "...", "hint": null}}
${wrapWords(`code is one of ${jsonErrorCodes().join(", ")}.`, 80).join("\n")}
`,
  },
  environment: {
    summary: "environment variables bulkcheck reads",
    text: () => `Environment variables:

${ENVIRONMENT.map(environmentHelp).join("\n")}
`,
  },
  formats: {
    summary: "the lists bulkcheck reads, and what it writes",
    text: () => `Input (submit, validate; a file, or - for stdin):
  .txt   one number per line
  .csv   delimiter , ; tab or | detected; a header row detected; the phone
  .tsv   column is --column NAME|INDEX, else the best phone-like header,
         else the column whose values parse as numbers
  Text in UTF-8 (with or without BOM), UTF-16 with BOM (Excel's "Unicode
  text"), else windows-1252, or --encoding; CRLF, CR or LF line ends.
  .xlsx  an Excel workbook (known by its content): the first visible worksheet,
         or --sheet NAME|N; cells as Excel shows them. A part past its size or
         compression limits (a zip bomb), or a cell past Excel's 32,767
         characters, refuses the workbook (exit 3). .xls and .xlsb: save as
         .xlsx or CSV first.

Output of results (download, submit --wait -o; --format):
  csv    the default: the spec's header and column order, extra columns last
  tsv    the same, tab-separated
  jsonl  one JSON object per row (the default with --json on stdout)
  json   one JSON array, streamed
  table  the first 20 rows in a table, for a look at a terminal (TSV when piped)
  xlsx   an Excel workbook: a results sheet (text and boolean cells, never a
         formula) and a Summary sheet; the default for -o FILE.xlsx
  --join SOURCE writes the source's own rows, columns, delimiter and line ends,
  then identifier, the product's result columns and bulkcheck_status (checked:
  checked now; reused: from the ledger; no_result: answered without a result;
  waiting: not sent, a later run checks it; invalid, no_code, other_country,
  duplicate, blank). When a source column has the name of a result column,
  every result column gets a bc_ prefix.

What a result may contain (else it is refused: exit 3, nothing written):
  success_cnt + failure_cnt at most the task's total; at most total rows; one
  row per identifier; identifiers of 1 to 15 digits with the country code (no
  plus, no spaces, not starting with 0); and, where the numbers uploaded are
  known (submit --wait -o, --join, retry-failed), only those numbers.
  download ID of an older task knows only the task: the rest still holds.

Formulas in CSV and TSV (OWASP's CSV-injection guidance):
  A cell that would start a formula in a spreadsheet (=, +, -, @, tab, CR, LF,
  or full-width ＝＋－＠ first) gets a ' in front when the service sent it:
  results, and the columns a join adds. Your own cells (a joined source's
  columns, the rejects' values) are written exactly as they were, so a join
  gives your file back; --safe-csv (download --join, submit, validate)
  neutralises them too. .xlsx output never holds a formula.

Other files:
  validate -o FILE      the upload list: one identifier a line, first-seen order
  --rejects FILE        every excluded row: CSV line,value,class,reason, then
                        record (its number among the data rows) and the
                        source's id column (source:NAME), when it has one
                        (values as read; --safe-csv neutralises formulas)
  --report FILE.html    the run's report: one self-contained HTML page
  Each is written whole or not at all (a temporary file beside it, renamed into
  place), never over the list being read; a file that exists is replaced only
  with --force (a symbolic link by the file itself, never through it).

On stdout: data only (task ids, results, --json objects); people's text goes to
stderr. Tables are boxed at a terminal and tab-separated when piped. On a
terminal, escape codes and other control characters from a file or the service
are shown as text (\\x1b); files and pipes get the data as it came.
`,
  },
  query: {
    summary: "--query: pick what to print out of --json output, with examples",
    text: () => `--query EXPR prints what a JMESPath expression (https://jmespath.org) selects
from the JSON of --json, in-process, so no jq is needed: a field (totals.runs),
a field of every item of a list (tasks[].task_id), a filter
(tasks[?status=='failed']), functions (length(runs), join(' ', ...)).

Commands that print one JSON object (runs, runs show, balance, validate,
download -o FILE, config list, ledger stats) apply it to that object. Those
that print one object per line (submit, status, wait, ledger lookup, and
download's rows on stdout) apply it to each line, as gh's --jq does.
A string selected is printed as it is, without quotes; null (a field the
object does not have) prints nothing; anything else is printed as JSON.

Examples:
  # the task ids of a run, as one argument for wait or download
  bulkcheck runs show RUN_ID --json --query "join(' ', tasks[].task_id)"
  # the ids of the tasks a submit created, one a line (its last line, the
  # run's summary, has no id, so prints nothing)
  bulkcheck submit crm.csv --type carrier_batch --country GB --yes --json \\
      --query id
  # what the runs of the last 30 days were charged, in micro-USD
  bulkcheck runs --since 30d --json --query totals.charged_micros
  # numbers whose carrier is not the one they were given (ported)
  bulkcheck download TASK_ID --json \\
      --query "carrier != underlying_carrier && identifier || null"
  # a number's carrier at each check, newest first
  bulkcheck ledger lookup 447400123456 --json --query "[checked_at, carrier]"

An expression that does not parse, or calls a function JMESPath does not
have, is exit 2 before the command does anything, as is one longer than
1,000 characters or nested more than 100 levels deep. One that fails on what is
printed (sum() of strings) prints nothing for that object, and the command
ends with exit 2 once it has done its work.
`,
  },
} as const satisfies Record<string, { summary: string; text: () => string }>;

/**
 * The environment variables bulkcheck reads, each described in lines as
 * `bulkcheck help environment` wraps them under itself (the command reference
 * and the man page join them and wrap them their own way).
 */
export const ENVIRONMENT: readonly { names: string; lines: readonly string[] }[] = [
  {
    names: "BULKCHECK_API_KEY",
    lines: [
      "The API key (wins over the profile's; there is no flag,",
      "so a key never shows in ps or shell history). Set but",
      "blank is an authentication error (exit 4).",
    ],
  },
  {
    names: "BULKCHECK_WEBHOOK_SECRET",
    lines: [
      "The secret that signs --notify's posts, whsec_… (wins",
      "over the profile's webhook-secret; never printed). Set",
      "but blank is a usage error (exit 2).",
    ],
  },
  {
    names: "BULKCHECK_BASE_URL",
    lines: ["The service base URL. --base-url wins over it, and it", "wins over the profile's base-url."],
  },
  { names: "BULKCHECK_PROFILE", lines: ["The config profile when --profile is not given", '(default "default").'] },
  {
    names: "BULKCHECK_STORE_URL",
    lines: [
      "A team's shared store, postgres://user@host/database",
      "(wins over the profile's store; the password from the",
      "URL, PGPASSWORD or ~/.pgpass; never printed).",
    ],
  },
  {
    names: "PGPASSWORD, PGPASSFILE",
    lines: ["With a shared store: its password when the URL has", "none, or the file to read it from (default ~/.pgpass)."],
  },
  {
    names: "BULKCHECK_CONFIG_DIR",
    lines: ["One directory for both the config file and the store", "(bulkcheck.db), instead of the XDG directories below."],
  },
  { names: "XDG_CONFIG_HOME", lines: ["config.json goes in $XDG_CONFIG_HOME/bulkcheck", "(default ~/.config/bulkcheck; ~ is HOME)."] },
  {
    names: "XDG_STATE_HOME",
    lines: ["The store of runs, tasks and results goes in", "$XDG_STATE_HOME/bulkcheck", "(default ~/.local/state/bulkcheck)."],
  },
  {
    names: "XDG_CACHE_HOME",
    lines: [
      "On Node 22.1 and later, Node's compile cache of",
      "bulkcheck goes in $XDG_CACHE_HOME/bulkcheck",
      "(default ~/.cache/bulkcheck), never in TMPDIR;",
      "NODE_COMPILE_CACHE moves it, and",
      "NODE_DISABLE_COMPILE_CACHE=1 turns it off.",
    ],
  },
  {
    names: "HTTPS_PROXY, HTTP_PROXY, NO_PROXY (or in lower case)",
    lines: ["A proxy for requests to the service, and the hosts that", "bypass it."],
  },
  { names: "NO_COLOR", lines: ["Any non-empty value: no colour (as --no-color)."] },
  {
    names: "FORCE_COLOR",
    lines: ["0: no colour; 1, 2 or 3: colour even where the terminal", "does not say it has colours. Never colour when piped."],
  },
  { names: "TERM", lines: ["dumb: no colour."] },
  { names: "CI", lines: ["Any non-empty value: no spinners or progress lines, only", "one line per change."] },
  {
    names: "TMPDIR",
    lines: [
      "Where prepared upload files and staged output wait while",
      "a command runs; removed afterwards, and by the next run",
      "after a crash.",
    ],
  },
];

/** One variable as help lists it: its description beside its names, or under them when they are too long. */
function environmentHelp({ names, lines }: (typeof ENVIRONMENT)[number]): string {
  const indent = " ".repeat(24);
  const first = names.length <= 20 ? `  ${names.padEnd(22)}${lines[0]}` : `  ${names}\n${indent}${lines[0]}`;
  return [first, ...lines.slice(1).map((line) => indent + line)].join("\n");
}

export type HelpTopic = keyof typeof HELP_TOPICS;

export function isHelpTopic(name: string): name is HelpTopic {
  return Object.hasOwn(HELP_TOPICS, name);
}

/** The topics, as the root help lists them. */
export function helpTopicsList(): string {
  const width = Math.max(...Object.keys(HELP_TOPICS).map((name) => name.length));
  const lines = Object.entries(HELP_TOPICS).map(([name, topic]) => `  bulkcheck help ${name.padEnd(width)}  ${topic.summary}`);
  return ["Help topics:", ...lines].join("\n");
}

import type { ErrorKind } from "../errors.js";

/**
 * The one table of exit codes. `bulkcheck help exit-codes`, the root help, the
 * command reference (docs/reference.md) and the man page's EXIT STATUS are all
 * rendered from it (`npm run docs`; test/docs/reference.test.ts fails when the
 * committed copies differ).
 */
export const EXIT_CODES = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  input: 3,
  auth: 4,
  balance: 5,
  task_failed: 6,
  unavailable: 7,
  pending: 8,
  count_mismatch: 9,
  busy: 10,
  changed: 11,
  interrupted: 130,
  terminated: 143,
} as const satisfies Record<ErrorKind | "ok" | "changed" | "terminated", number>;

type Outcome = keyof typeof EXIT_CODES;

/**
 * What each code means, in Markdown (`code` spans): the command reference shows it
 * as it is, help and the man page without the backticks. Every outcome has one, or
 * this does not compile.
 */
const MEANINGS: Readonly<Record<Outcome, string>> = {
  ok: "success",
  unexpected: "unexpected error: a bug, or a response the client cannot read. Never a situation you can cause",
  usage:
    "usage error, found before anything is uploaded or reserved: bad flags or arguments, missing or broken configuration, no `--yes` where no prompt is possible, a file, directory or port that cannot be used (missing, a directory, no permission, in use, the list being read or bulkcheck's own store), or a store of a newer schema than this bulkcheck knows",
  input:
    "input rejected, locally or by the service (40000, 40001, 40002, 42200); a key or source that changed; an output that cannot be written while writing it (disk full, quota, permission; the path is named); no space left for the store; a damaged store (the file is named, with what to do; `bulkcheck store check` finds what is wrong); a result file that breaks the rules of what it may contain (nothing is written)",
  auth: "authentication: no API key (a blank `BULKCHECK_API_KEY` included), or the service refused it (40100)",
  balance: "insufficient balance (40200), or the estimate is over `--max-cost`",
  task_failed: "a task ended with status `failed` (refunded in full); `bulkcheck retry-failed ID` checks its numbers again",
  unavailable:
    "service unavailable after retries (42900, 42901, 50300, 50303, 50400, connection), the store unavailable (a team's PostgreSQL down, restarted or out of reach), or an answer to an upload that the client refuses (the task it names is kept in the run); the same command carries on once it is back",
  pending: "a `--timeout` ran out (tasks still processing, or the service too slow to answer); the command to carry on is printed",
  count_mismatch: "`--strict`: the result's rows disagree with the service's counts (the output was written)",
  busy: "`--if-busy exit`: another bulkcheck process (on this machine, or another sharing the store) is carrying on the same run; nothing was done here (by default the command waits for it instead)",
  changed:
    "`--exit-on-change`: the command succeeded and something changed since the previous check of the list (a result, or a number that appeared in it or left it). Not a failure, as `diff` exits 1 when files differ",
  interrupted:
    'interrupted: Ctrl-C, or Ctrl-C/Ctrl-D at a prompt ("Cancelled; nothing was uploaded.", or for a secret "Cancelled; the API key was not changed.")',
  terminated: "terminated (SIGTERM), with the same clean-up as Ctrl-C",
};

interface ExitCodeRow {
  exitCode: number;
  /** The `code` of a `--json` error object; none for success (0, and 11 of --exit-on-change). */
  jsonCode: string | undefined;
  /** Markdown. */
  meaning: string;
}

/** The outcomes that are no failure: no `--json` error object is printed for them. */
const SUCCESSES: ReadonlySet<Outcome> = new Set(["ok", "changed"]);

/** The table, by exit code. */
export const EXIT_CODE_TABLE: readonly ExitCodeRow[] = (Object.keys(EXIT_CODES) as Outcome[])
  .map((outcome) => ({
    exitCode: EXIT_CODES[outcome],
    jsonCode: SUCCESSES.has(outcome) ? undefined : outcome,
    meaning: MEANINGS[outcome],
  }))
  .sort((a, b) => a.exitCode - b.exitCode);

export function exitCodeFor(kind: ErrorKind): number {
  return EXIT_CODES[kind];
}

/**
 * The failure an exit code stands for, read back from the table (a command run inside another,
 * as the demo's steps are, ends the outer one the same way): 143 is a stop as 130 is (which
 * signal, the stop itself says); a code that is no failure of this table is "unexpected".
 */
export function kindForExitCode(code: number): ErrorKind {
  if (code === EXIT_CODES.terminated) return "interrupted";
  const kind = (Object.keys(EXIT_CODES) as Outcome[]).find(
    (outcome): outcome is ErrorKind => EXIT_CODES[outcome] === code && !SUCCESSES.has(outcome) && outcome !== "terminated",
  );
  return kind ?? "unexpected";
}

const plain = (markdown: string): string => markdown.replaceAll("`", "");

/** The JSON codes a failure can carry, in exit-code order, as help lists them. */
export function jsonErrorCodes(): string[] {
  return EXIT_CODE_TABLE.flatMap((row) => (row.jsonCode === undefined ? [] : [row.jsonCode]));
}

/** The table as help prints it, each meaning wrapped under itself to fit 80 columns. */
export function exitCodesHelp(): string {
  const indent = " ".repeat(7);
  const rows = EXIT_CODE_TABLE.map(
    ({ exitCode, meaning }) => `  ${String(exitCode).padStart(3)}  ${wrapWords(plain(meaning), 80 - indent.length).join(`\n${indent}`)}`,
  );
  return ["Exit codes:", ...rows].join("\n");
}

/** The table as the command reference's "Exit codes" section holds it. */
export function exitCodesMarkdown(): string {
  const rows = EXIT_CODE_TABLE.map(
    ({ exitCode, jsonCode, meaning }) => `| ${exitCode} | ${meaning} | ${jsonCode === undefined ? "" : `\`${jsonCode}\``} |`,
  );
  return ["| Code | Meaning | `--json` error code |", "|---|---|---|", ...rows].join("\n");
}

/** Words joined into lines of at most `width` characters (a longer word gets a line of its own). */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line];
}

import type { ErrorKind } from "../errors.js";

/**
 * The one table of exit codes. README's "Exit codes" section and `bulkcheck help
 * exit-codes` print this same table.
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
  interrupted: 130,
  terminated: 143,
} as const satisfies Record<ErrorKind | "ok" | "terminated", number>;

export const EXIT_CODE_MEANINGS: ReadonlyArray<readonly [number, string]> = [
  [EXIT_CODES.ok, "success"],
  [EXIT_CODES.unexpected, "unexpected error (a bug, or a response the client cannot read)"],
  [
    EXIT_CODES.usage,
    "usage error: bad flags or arguments, missing or broken configuration, no --yes where no prompt is possible, or a file, directory or port that cannot be used (missing, a directory, no permission, disk full, in use)",
  ],
  [
    EXIT_CODES.input,
    "input rejected, locally or by the service (40000, 40001, 40002, 42200); a key or source that changed; an output that cannot be written; a result file that breaks the rules of what it may contain (nothing written)",
  ],
  [EXIT_CODES.auth, "authentication: no API key, or the service refused it (40100)"],
  [EXIT_CODES.balance, "insufficient balance (40200), or the estimate is over --max-cost"],
  [EXIT_CODES.task_failed, "a task ended with status failed"],
  [EXIT_CODES.unavailable, "service unavailable after retries (42900, 42901, 50300, 50303, 50400, connection)"],
  [EXIT_CODES.pending, "a --timeout ran out (tasks still processing, or the service too slow to answer)"],
  [EXIT_CODES.interrupted, "interrupted (Ctrl-C, or Ctrl-C/Ctrl-D at a prompt)"],
  [EXIT_CODES.terminated, "terminated (SIGTERM), with the same clean-up as Ctrl-C"],
];

export function exitCodeFor(kind: ErrorKind): number {
  return EXIT_CODES[kind];
}

/** The table as help prints it, each meaning wrapped under itself to fit 80 columns. */
export function exitCodesHelp(): string {
  const indent = " ".repeat(7);
  const rows = EXIT_CODE_MEANINGS.map(
    ([code, meaning]) => `  ${String(code).padStart(3)}  ${wrapWords(meaning, 80 - indent.length).join(`\n${indent}`)}`,
  );
  return ["Exit codes:", ...rows].join("\n");
}

function wrapWords(text: string, width: number): string[] {
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

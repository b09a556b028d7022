import { UsageError } from "../../../errors.js";
import { FileSystemError } from "../../../file-system-errors.js";
import { assertReadableTwice } from "../../../prepare/input-source.js";
import type { OutputFormat } from "../../../results/index.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { checkOutputs } from "./destination.js";
import { writeOutputs } from "../../../outputs/run-end.js";
import { runWritingDeps } from "./output-deps.js";
import { joinFormat, resultFormat } from "./output-format.js";
import { checkReportFlags } from "./report-flags.js";
import { waitAndReport, type WaitFlags } from "./waiting.js";
import type { Task } from "../../../spec/task.js";
import { isFinished } from "../../../tasks/wait.js";
import type { OutputsRequest } from "../../../outputs/outputs-request.js";

/** What to do once tasks are created: submit's and retry-failed's --wait, -o, --join. */
export interface AfterUploadFlags {
  /** --no-ledger: keep nothing of the results in the ledger. */
  ledger?: boolean;
  wait?: boolean;
  interval?: number;
  output?: string;
  join?: boolean;
  format?: OutputFormat;
  force?: boolean;
  /** --report FILE.html (submit --wait). */
  report?: string;
  /** --safe-csv (submit --wait --join): neutralise the source's formula-like cells too. */
  safeCsv?: boolean;
}

/**
 * -o needs --wait, and every file the command writes (-o, --report, submit's --rejects)
 * must be one it may write (see checkOutputs): checked before anything is uploaded.
 * `reading` is the list the command reads, which no output may be.
 */
export async function checkOutputFlags(ctx: Context, flags: AfterUploadFlags & { rejects?: string }, reading?: string): Promise<void> {
  if ((flags.output !== undefined || flags.join) && !flags.wait) {
    throw new UsageError("-o and --join need --wait (results do not exist until the task has finished).", {
      hint: "Add --wait, or download later: bulkcheck download <id> -o FILE",
    });
  }
  if (flags.report !== undefined && !flags.wait) {
    throw new UsageError("--report needs --wait (results do not exist until the task has finished).", {
      hint: "Add --wait, or write the report later: bulkcheck report <id> -o report.html",
    });
  }
  checkReportFlags(flags);
  if (flags.join && reading !== undefined) await assertReadableTwice(absolutePath(ctx, reading), "--join");
  if (flags.join) joinFormat(ctx, flags);
  else if (flags.output !== undefined) resultFormat(ctx, flags);
  await checkOutputs(
    ctx,
    { "-o": flags.output, "--report": flags.report, "--rejects": flags.rejects },
    { force: flags.force, reading: [reading] },
  );
}

/**
 * The outputs the flags ask for, as one request (see OutputsRequest): -o with its format
 * (joined to the list at `joinSource` with --join), --report, --force. Formats are decided
 * here, before any request. The action adds what only it knows (--changes and the like).
 */
export function outputsRequest(
  ctx: Context,
  flags: AfterUploadFlags,
  { ledger, joinSource }: { ledger: boolean; joinSource?: string | undefined },
): OutputsRequest {
  const output = flags.output;
  return {
    wait: Boolean(flags.wait),
    ledger,
    ...(output === undefined
      ? {}
      : {
          output:
            flags.join && joinSource !== undefined
              ? { path: output, format: joinFormat(ctx, flags), join: { sourcePath: joinSource, safeCsv: Boolean(flags.safeCsv) } }
              : { path: output, format: resultFormat(ctx, flags) },
        }),
    ...(flags.report === undefined ? {} : { report: flags.report }),
    countChanges: false,
    force: Boolean(flags.force),
  };
}

/**
 * Without --wait: say what to run next. With --wait: wait for the tasks (checked as `wait`
 * says) unless the run followed them to their end already (`finished`, each reported
 * then), then write what the request asks for.
 */
export async function afterUpload(
  ctx: Context,
  ids: readonly string[],
  request: OutputsRequest,
  wait: WaitFlags,
  finished?: readonly Task[],
): Promise<void> {
  if (!request.wait) {
    ctx.printer.note(`Next: bulkcheck wait ${ids.join(" ")}   then: bulkcheck download ${ids.join(" ")} -o results.csv`);
    return;
  }
  const tasks = finished && finished.every(isFinished) ? [...finished] : await waitAndReport(ctx, ids, wait);
  ctx.outcome.charge(tasks, await ctx.prices());
  // The request's -o (merged, or joined to its list) and --report (see outputs/run-end.ts's writeOutputs).
  try {
    await writeOutputs(ids, request, {}, await runWritingDeps(ctx, request, {}));
  } catch (error) {
    throw tasksGoOn(error);
  }
}

const TASKS_GO_ON =
  "The tasks were submitted and go on at the service. Free some space (or fix the permissions), then run the same command again: " +
  "it takes these tasks' results (carrying the run on, or from the ledger), and nothing is submitted or charged twice.";

/**
 * An output that could not be written once the tasks exist (no space, a quota), or a
 * store or temporary directory that filled up meanwhile, is still exit 3 naming the
 * path, and its hint says that the tasks go on and how to carry on.
 */
export function tasksGoOn(error: unknown): unknown {
  return error instanceof FileSystemError && (error.writing || error.kind === "input") ? error.withHint(TASKS_GO_ON) : error;
}

import { UsageError } from "../../errors.js";
import type { OutputFormat } from "../../results/index.js";
import { assertKeyLength } from "../../tasks/idempotency.js";
import type { Context } from "../context.js";
import { checkDestination, downloadTasks } from "../download-flow.js";
import { joinTasks } from "../join-flow.js";
import { countryFromFlag, prepareFromFlags, printPreparationSummary, productFromFlag, type PreparationFlags } from "../preparation.js";
import { absolutePath } from "../paths.js";
import { submitPrepared, type SubmitFlags } from "../submit-flow.js";
import { withTempDir } from "../temp-dir.js";
import { pollInterval, waitAndReport } from "./wait.js";

export interface AfterUploadFlags {
  wait?: boolean;
  interval?: number;
  timeout?: number;
  output?: string;
  join?: boolean;
  format?: OutputFormat;
  force?: boolean;
}

export interface SubmitCommandFlags extends PreparationFlags, SubmitFlags, AfterUploadFlags {
  type: string;
}

/**
 * Prepare → check sizes and cost → journal the keys → upload (≤ 5 at a time) →
 * print task ids; with --wait, wait, and with -o, download (or join) the results.
 */
export async function submitCommand(ctx: Context, file: string, flags: SubmitCommandFlags): Promise<void> {
  const product = productFromFlag(flags.type);
  const country = countryFromFlag(flags.country, product);
  checkFlags(ctx, file, flags);
  // A refused --interval must stop the run before anything is reserved, not after the upload.
  if (flags.wait) await pollInterval(ctx, flags.interval);
  const limits = await ctx.limits();
  const source = file === "-" ? {} : { path: absolutePath(ctx, file) };
  const uploaded = await withTempDir(async (dir) => {
    const prepared = await prepareFromFlags(ctx, file, flags, country, { outputDir: dir, maxTaskSize: limits.maxTaskSize });
    if (!ctx.globals.json) printPreparationSummary(ctx, prepared);
    return submitPrepared(
      ctx,
      { product, country, chunks: prepared.chunks, entry: { source, preparation: prepared.settings, prepared: { ...prepared.summary } } },
      { ...flags, idsToStderr: flags.output === "-" },
    );
  });
  if (!uploaded) return;
  await afterUpload(ctx, uploaded.map((result) => result.task.id), flags, source.path);
}

/** Without --wait: say what to run next. With --wait: wait, then download (-o) or join (--join). */
export async function afterUpload(ctx: Context, ids: readonly string[], flags: AfterUploadFlags, sourcePath?: string): Promise<void> {
  if (!flags.wait) {
    ctx.printer.note(`Next: bulkcheck wait ${ids.join(" ")}   then: bulkcheck download ${ids.join(" ")} -o results.csv`);
    return;
  }
  await waitAndReport(ctx, ids, flags);
  if (flags.output === undefined) {
    ctx.printer.note(`Done. Download with: bulkcheck download ${ids.join(" ")} -o results.csv`);
  } else if (flags.join && sourcePath) {
    await joinTasks(ctx, ids, { ...flags, join: sourcePath });
  } else {
    await downloadTasks(ctx, ids, flags);
  }
}

function checkFlags(ctx: Context, file: string, flags: SubmitCommandFlags): void {
  if (flags.idempotencyKey !== undefined) assertKeyLength(flags.idempotencyKey);
  if (flags.join && (file === "-" || flags.output === undefined)) {
    throw new UsageError("--join needs a source file (not stdin) and -o FILE.");
  }
  checkOutputFlags(ctx, flags);
}

/** -o needs --wait, an existing file needs --force, and its directory must exist: checked before anything is uploaded. */
export function checkOutputFlags(ctx: Context, flags: AfterUploadFlags): void {
  if ((flags.output !== undefined || flags.join) && !flags.wait) {
    throw new UsageError("-o and --join need --wait (results do not exist until the task has finished).", {
      hint: "Add --wait, or download later: bulkcheck download <id> -o FILE",
    });
  }
  if (flags.output !== undefined) checkDestination(ctx, flags.output, flags.force);
}

import { existsSync } from "node:fs";
import { UsageError } from "../../errors.js";
import type { OutputFormat } from "../../results/index.js";
import { assertKeyLength } from "../../tasks/idempotency.js";
import type { Context } from "../context.js";
import { downloadTasks } from "../download-flow.js";
import { absolutePath, countryFromFlag, prepareFromFlags, printPreparationSummary, productFromFlag, type PreparationFlags } from "../preparation.js";
import { submitPrepared, type SubmitFlags } from "../submit-flow.js";
import { withTempDir } from "../temp-dir.js";
import { waitAndReport } from "./wait.js";

export interface SubmitCommandFlags extends PreparationFlags, SubmitFlags {
  type: string;
  wait?: boolean;
  interval?: number;
  timeout?: number;
  output?: string;
  join?: boolean;
  format?: OutputFormat;
  force?: boolean;
}

/**
 * Prepare → check sizes and cost → journal the keys → upload (≤ 5 at a time) →
 * print task ids; with --wait, wait, and with -o, download (or join) the results.
 */
export async function submitCommand(ctx: Context, file: string, flags: SubmitCommandFlags): Promise<void> {
  const product = productFromFlag(flags.type);
  const country = countryFromFlag(flags.country, product);
  checkFlags(ctx, file, flags);
  const limits = await ctx.limits();
  const source = file === "-" ? {} : { path: absolutePath(ctx, file) };
  const uploaded = await withTempDir(async (dir) => {
    const prepared = await prepareFromFlags(ctx, file, flags, country, { outputDir: dir, maxTaskSize: limits.maxTaskSize });
    if (!ctx.globals.json) printPreparationSummary(ctx, prepared);
    return submitPrepared(
      ctx,
      { product, country, chunks: prepared.chunks, entry: { source, preparation: prepared.settings } },
      { ...flags, idsToStderr: flags.output === "-" },
    );
  });
  if (!uploaded) return;
  const ids = uploaded.map((result) => result.task.id);
  if (!flags.wait) {
    ctx.printer.note(`Next: bulkcheck wait ${ids.join(" ")}   then: bulkcheck download ${ids.join(" ")} -o results.csv`);
    return;
  }
  await waitAndReport(ctx, ids, flags);
  if (flags.output === undefined) {
    ctx.printer.note(`Done. Download with: bulkcheck download ${ids.join(" ")} -o results.csv`);
    return;
  }
  if (flags.join) {
    const { joinTasks } = await import("../join-flow.js");
    await joinTasks(ctx, ids, { ...flags, join: source.path! });
    return;
  }
  await downloadTasks(ctx, ids, flags);
}

function checkFlags(ctx: Context, file: string, flags: SubmitCommandFlags): void {
  if (flags.idempotencyKey !== undefined) assertKeyLength(flags.idempotencyKey);
  if ((flags.output !== undefined || flags.join) && !flags.wait) {
    throw new UsageError("-o and --join need --wait (submit returns before results exist).", {
      hint: "Add --wait, or download later: bulkcheck download <id> -o FILE",
    });
  }
  if (flags.join && (file === "-" || flags.output === undefined)) {
    throw new UsageError("--join needs a source file (not stdin) and -o FILE.");
  }
  if (flags.output !== undefined && flags.output !== "-" && !flags.force && existsSync(absolutePath(ctx, flags.output))) {
    throw new UsageError(`${flags.output} already exists.`, { hint: "Choose another path, or pass --force to replace it." });
  }
}

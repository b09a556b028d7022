import { createReadStream, existsSync } from "node:fs";
import { pipeline } from "node:stream/promises";
import { UsageError } from "../../errors.js";
import type { Context } from "../context.js";
import { countryFromFlag, prepareFromFlags, printPreparationSummary, productFromFlag, type PreparationFlags } from "../preparation.js";
import { absolutePath } from "../paths.js";
import { withTempDir } from "../temp-dir.js";

export interface ValidateFlags extends PreparationFlags {
  type?: string;
  output?: string;
  force?: boolean;
}

/** Local only: no key, no network. Summary on stderr (or JSON on stdout), upload list to -o, rejects to --rejects. */
export async function validateCommand(ctx: Context, file: string, flags: ValidateFlags): Promise<void> {
  const product = flags.type === undefined ? undefined : productFromFlag(flags.type);
  const country = countryFromFlag(flags.country, product);
  const listToStdout = flags.output === "-";
  if (listToStdout && ctx.globals.json) throw new UsageError("-o - and --json both want stdout; write the list to a file, or drop --json.");
  for (const path of [listToStdout ? undefined : flags.output, flags.rejects]) {
    if (path !== undefined && !flags.force && existsSync(absolutePath(ctx, path))) {
      throw new UsageError(`${path} already exists.`, { hint: "Choose another path, or pass --force to replace it." });
    }
  }
  const result = await withTempDir(async (dir) => {
    const output = flags.output === undefined || listToStdout ? { outputDir: dir } : { uploadPath: absolutePath(ctx, flags.output) };
    const prepared = await prepareFromFlags(ctx, file, flags, country, output);
    if (listToStdout) {
      for (const chunk of prepared.chunks) await pipeline(createReadStream(chunk.path), ctx.io.stdout, { end: false });
    }
    return prepared;
  });
  if (ctx.globals.json) {
    ctx.printer.json({ ...result.summary, column: result.column, format: result.format });
    return;
  }
  printPreparationSummary(ctx, result);
  if (flags.output && !listToStdout) ctx.printer.note(`Upload list (${result.summary.kept} numbers) written to ${flags.output}.`);
  if (flags.rejects) ctx.printer.note(`Excluded rows written to ${flags.rejects}.`);
}

import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { UsageError } from "../../errors.js";
import type { Context } from "../context.js";
import { snakeCaseKeys } from "../json-keys.js";
import { absolutePath } from "../paths.js";
import { withTempDir } from "../../temp-dir.js";
import { checkOutputs } from "./shared/destination.js";
import type { PreparationFlags } from "./shared/preparation.js";
import { count } from "../../format-count.js";
import { checkRejectsToStdout, prepareFromFlags, productFromFlag } from "./shared/preparation.js";
import { noCodeHint, printPreparationSummary } from "../views/preparation-view.js";
import { noCodeNumbers } from "../../prepare/no-code.js";
import { countryChoice } from "./shared/country-choice.js";

export interface ValidateOptions extends PreparationFlags {
  type?: string;
  output?: string;
}

/** Local only: no key, no network. Summary on stderr (or JSON on stdout), upload list to -o, rejects to --rejects. */
export async function validateAction(ctx: Context, file: string, options: ValidateOptions): Promise<void> {
  const product = options.type === undefined ? undefined : productFromFlag(options.type);
  const { country, anyRegion } = countryChoice(options, product);
  const listToStdout = options.output === "-";
  if (listToStdout && ctx.globals.json) throw new UsageError("-o - and --json both want stdout; write the list to a file, or drop --json.");
  checkRejectsToStdout(options, listToStdout ? "-o -" : ctx.globals.json ? "--json" : undefined);
  const rejectsToStdout = options.rejects === "-";
  await checkOutputs(ctx, { "-o": options.output, "--rejects": options.rejects }, { force: options.force, reading: [file] });
  const outcome = await withTempDir(async (dir) => {
    const output = {
      ...(options.output === undefined || listToStdout ? { outputDir: dir } : { uploadPath: absolutePath(ctx, options.output) }),
      ...(anyRegion ? { anyRegion } : {}),
    };
    const prepared = await prepareFromFlags(ctx, file, options, country, output);
    if (listToStdout) {
      for (const chunk of prepared.chunks) {
        await pipeline(createReadStream(chunk.path), ctx.io.stdout, { end: false, signal: ctx.signal });
      }
    }
    // While the upload list still exists: the hint reads it.
    return { prepared, hint: noCodeHint(await noCodeNumbers(prepared), anyRegion) };
  });
  const { prepared: result, hint } = outcome;
  if (ctx.globals.json) {
    ctx.printer.json(snakeCaseKeys({ ...result.summary, column: result.column, format: result.format }));
    if (hint) ctx.printer.note(hint);
    return;
  }
  printPreparationSummary(ctx, result);
  if (hint) ctx.printer.note(hint);
  if (options.output && !listToStdout)
    ctx.printer.note(`Upload list (${count(result.summary.kept)} numbers) written to ${options.output}.`);
  if (options.rejects && !rejectsToStdout) ctx.printer.note(`Excluded rows written to ${options.rejects}.`);
}

import type { OutputDeps } from "../../../outputs/output-files.js";
import type { OutputsRequest } from "../../../outputs/outputs-request.js";
import type { RunEndDeps } from "../../../outputs/run-end.js";
import type { OutputFormat } from "../../../results/index.js";
import type { Context } from "../../context.js";
import { dataOut } from "../../io.js";
import { absolutePath } from "../../paths.js";
import { drawOutputEvent, terminalTable, type OutputContext } from "../../views/output-events.js";
import { drawRunEnd, type RunEventDrawer } from "../../views/run-end-events.js";
import { checkOutputs } from "./destination.js";
import { downloadDeps } from "./download-deps.js";
import { withStagedOutput } from "./staged-output.js";

/** download's flags of its merged output (submit and retry-failed take the same -o, --format, --force, --report). */
export interface DownloadFlags {
  output?: string;
  force?: boolean;
  format?: OutputFormat;
  strict?: boolean;
  /** Also write the HTML report of the run here. */
  report?: string;
  /** --no-ledger: keep nothing of this download in the ledger. */
  ledger?: boolean;
}

/**
 * What writing a run's outputs (outputs/run-end.ts) needs beyond outputDeps: how a table is
 * drawn, the destination rules checked again just before writing, and the run's own events
 * (`drawRunEvent`; see drawRunEnd).
 */
export async function runWritingDeps(
  ctx: Context,
  request: OutputsRequest,
  context: OutputContext,
  drawRunEvent: RunEventDrawer = () => undefined,
): Promise<Omit<RunEndDeps, "outputs">> {
  const deps = await outputDeps(ctx, request, context);
  return {
    ...deps,
    table: terminalTable(ctx),
    checkDestinations: (outputs, reading) => checkOutputs(ctx, outputs, { force: request.force, reading: [...reading] }),
    onEvent: drawRunEnd(ctx, deps.onEvent, drawRunEvent),
  };
}

/**
 * What writing outputs (outputs/output-files.ts, join.ts) needs from this process: the
 * download's deps (the ledger's recorder unless --no-ledger), the store, prices, stdout
 * through a private file of its own, and its events told on stderr (and stdout with --json).
 */
export async function outputDeps(ctx: Context, flags: { ledger?: boolean }, context: OutputContext = {}): Promise<OutputDeps> {
  const prices = await ctx.prices();
  return {
    download: await downloadDeps(ctx, flags),
    store: await ctx.store(),
    scope: await ctx.scope(),
    now: ctx.now,
    prices,
    absolute: (path) => absolutePath(ctx, path),
    stage: (output, produce, kind) => withStagedOutput(ctx, output, produce, kind),
    writeStdout: (text) => dataOut(ctx.io).write(text),
    onEvent: drawOutputEvent(ctx, { ...context, prices }),
  };
}

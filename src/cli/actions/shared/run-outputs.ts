import { stateDir } from "../../../config/paths.js";
import { RunOutputs } from "../../../outputs/run-outputs.js";
import type { RunOutcome } from "../../../run/submit-request.js";
import type { ServiceType } from "../../../spec/products.js";
import type { RunRecord } from "../../../store/store.js";
import type { UploadResult } from "../../../tasks/submit.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { drawRunOutputsEvent, runEventDrawer, type ChangesView } from "../../views/run-end-events.js";
import { fetchesResults, type OutputsRequest } from "../../../outputs/outputs-request.js";
import { endRun, waitingOf } from "../../../outputs/run-end.js";
import { tasksGoOn } from "./after-upload.js";
import { runWritingDeps } from "./output-deps.js";
import { isStdout } from "./destination.js";
import { resultRecording } from "./download-deps.js";

/**
 * A run's outputs as the request asks for them (see RunOutputs for what happens to the
 * results, outputs/run-end.ts for the end of the run), told on the terminal: whether results
 * are fetched as tasks finish, then the run ended once every task has.
 */
export async function runOutputs(ctx: Context, request: OutputsRequest, product: ServiceType, view: ChangesView) {
  const output = new RunOutputs({
    store: await ctx.store(),
    scope: await ctx.scope(),
    client: () => ctx.client(),
    product,
    ledger: request.ledger,
    stateDir: stateDir(ctx.env),
    now: ctx.now,
    sleep: ctx.sleep,
    signal: ctx.signal,
    recording: resultRecording(ctx, await ctx.storeLocation()),
    onEvent: drawRunOutputsEvent(ctx),
  });
  const drawRunEvent = runEventDrawer(ctx, request, view);
  return {
    /** The run's results on their way (a chain reads each product's when its tasks have finished). */
    outputs: output,
    /** How the end of the run is told (a chain's end tells its changes through its first product's). */
    drawRunEvent,
    /** With --wait, results are fetched as tasks finish: for the output, or for the ledger alone. */
    fetchesResults: fetchesResults(request),
    stage: (result: UploadResult, run: RunRecord) =>
      output.stage(result, run).catch((error: unknown) => {
        throw tasksGoOn(error);
      }),
    /**
     * Ends the run (outputs/run-end.ts): writes what the flags ask for once its tasks are submitted
     * (and, with --wait, finished), finishes it with where its output went (`runs show`), cleans up.
     */
    async end(outcome: RunOutcome): Promise<void> {
      const context = { runId: outcome.run.id, waiting: waitingOf(outcome.run) };
      const deps = { ...(await runWritingDeps(ctx, request, context, drawRunEvent)), outputs: output };
      await endRun(outcome, request, outputRecord(ctx, request), deps).catch((error: unknown) => {
        throw tasksGoOn(error);
      });
    },
  };
}

/** What a run's record keeps of where its outputs went (`runs show`). */
export function outputRecord(ctx: Context, request: OutputsRequest) {
  const { output: written, changes, report } = request;
  return {
    ...(written === undefined ? {} : { path: isStdout(written.path) ? "-" : absolutePath(ctx, written.path) }),
    ...(written?.join ? { join: true } : {}),
    ...(changes === undefined ? {} : { changes: isStdout(changes.path) ? "-" : absolutePath(ctx, changes.path) }),
    ...(report === undefined ? {} : { report: isStdout(report) ? "-" : absolutePath(ctx, report) }),
  };
}

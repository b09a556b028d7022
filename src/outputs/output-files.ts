import type { ChangesSummary } from "../ledger/changes.js";
import { chainReportHtml, reportHtml, writeReportFile, type ReadResults, type ReportContext } from "../report/write-report.js";
import type { OutputFormat } from "../results/index.js";
import type { ServiceType } from "../spec/products.js";
import type { RunRecord, Scope, Store } from "../store/store.js";
import { downloadResults, type DownloadDeps, type DownloadOutcome, type StagedResults } from "../tasks/download.js";
import { reportResults } from "./report-results.js";
import type { WholeRunEvent } from "./whole-runs.js";
import type { JoinOutcome } from "./join-rows.js";

/*
 * The files a command's tasks' results become (-o merged, --report), written here for every
 * command that writes them (download, report, submit and retry-failed --wait): what is
 * written, and told as events; the command only words them. A join is join.ts's
 * (writeJoinedOutput), loaded only by the commands that join.
 */

/** What a run's own output knows beyond its tasks' ids: its staged results, the changes since each number's previous check, and its record. */
export interface OutputOfRun {
  staged?: StagedResults | undefined;
  changes?: ChangesSummary | undefined;
  record?: RunRecord | undefined;
}

/** What the kind of file written for people or programs is, for a copy to stdout (see OutputDeps.stage). */
export type StagedKind = "table" | "json-lines" | "data";

/** What writing an output needs from the command around it. */
export interface OutputDeps {
  /** Downloading (the client, the store's knowledge of the tasks, the ledger's recorder), without staged results. */
  download: DownloadDeps;
  store: Store;
  scope: Scope;
  now: () => number;
  prices: Record<ServiceType, number>;
  /** A path as the user gave it, made absolute. */
  absolute: (path: string) => string;
  /**
   * Produces an output at `output` (a file, or stdout when `-` or absent): `produce` writes the file
   * at the path it is given (with the mode given), and for stdout the command copies it there once whole.
   */
  stage: <T>(output: string | undefined, produce: (path: string, mode: number | undefined) => Promise<T>, kind: StagedKind) => Promise<T>;
  /** Writes the text (an HTML report) to stdout. */
  writeStdout: (text: string) => void;
  onEvent: (event: OutputEvent) => void;
}

/** What writing outputs tells as it goes. */
export type OutputEvent =
  /** Tasks given by id were completed to their whole runs for a join or a report. */
  | (WholeRunEvent & { output: "join" | "report" })
  /** The merged results were written (to stdout when `path` is undefined). */
  | { type: "merged"; outcome: DownloadOutcome; path: string | undefined }
  /** The list's rows were written with the results beside them (see join.ts's writeJoinedOutput). */
  | { type: "joined"; outcome: JoinOutcome; path: string | undefined; format: "csv" | "xlsx"; laterProducts?: readonly string[] }
  /** The report was written (to stdout when `path` is undefined). */
  | { type: "report"; path: string | undefined };

/** Where results go as merged rows: a file or stdout, the format, and how a table is drawn there. */
export interface MergedOutput {
  /** A file as the user gave it, or `-`/undefined for stdout. */
  path: string | undefined;
  format: OutputFormat;
  force: boolean;
  /** --report from the same reading, when asked. */
  report?: string | undefined;
  table: { colour: boolean; width?: number | undefined; terminal: boolean };
}

/** Where output goes: `-` or nothing is stdout, anything else a file written atomically. */
export function isStdout(path: string | undefined): path is "-" | undefined {
  return path === undefined || path === "-";
}

/**
 * Downloads (and merges) the results of finished tasks into one output, and with --report
 * writes the report from the same reading; a run's own output reads its staged results.
 */
export async function writeMergedOutput(
  taskIds: readonly string[],
  output: MergedOutput,
  run: OutputOfRun,
  deps: OutputDeps,
): Promise<DownloadOutcome> {
  const toStdout = isStdout(output.path);
  const { format } = output;
  const outcome = await deps.stage(
    output.path,
    (path, mode) =>
      downloadResults({ ...deps.download, ...(run.staged ? { staged: run.staged } : {}) }, taskIds, {
        path,
        ...(mode === undefined ? {} : { mode }),
        force: toStdout || output.force,
        format,
        colour: output.table.colour,
        tableWidth: output.table.width,
        terminal: toStdout && output.table.terminal,
        prices: deps.prices,
      }),
    format === "table" ? "table" : format === "jsonl" ? "json-lines" : "data",
  );
  deps.onEvent({ type: "merged", outcome, path: toStdout ? undefined : output.path });
  if (output.report !== undefined) await writeReport(output.report, outcome, output.force, { changes: run.changes, run: run.record }, deps);
  return outcome;
}

/**
 * Writes the report of these tasks (see reportResults for what it reads: a run's own
 * staged results, or the tasks completed to their whole runs) to `path`, or stdout.
 */
export async function writeReportOutput(
  taskIds: readonly string[],
  path: string | undefined,
  force: boolean,
  run: OutputOfRun,
  deps: OutputDeps,
): Promise<ReadResults> {
  const { read, unreadLists } = await reportResults(taskIds, {
    ...deps.download,
    store: deps.store,
    scope: deps.scope,
    ...(run.staged ? { staged: run.staged } : {}),
    onEvent: (event) => deps.onEvent({ ...event, output: "report" }),
  });
  await writeReport(path, read, force, { changes: run.changes, run: run.record, ...(unreadLists.length > 0 ? { unreadLists } : {}) }, deps);
  return read;
}

/** Writes the HTML report of results just read: to `path` (atomically), or to stdout when `path` is `-` or absent. */
async function writeReport(
  path: string | undefined,
  read: ReadResults,
  force: boolean,
  context: ReportContext,
  deps: ReportWriting,
): Promise<void> {
  await publishReport(
    path,
    await reportHtml({ origins: deps.download.origins, prices: deps.prices, now: deps.now }, read, context),
    force,
    deps,
  );
}

type ReportWriting = Pick<OutputDeps, "download" | "prices" | "now" | "absolute" | "writeStdout" | "onEvent">;

/**
 * Writes the report of a chain (see chainReportHtml) to `path`, or stdout: each product's
 * results read from its run's staged results, with its changes.
 */
export async function writeChainReport(
  products: ReadonlyArray<{ taskIds: readonly string[]; run: OutputOfRun }>,
  path: string | undefined,
  force: boolean,
  deps: OutputDeps,
): Promise<void> {
  const read: Array<{ read: ReadResults; context: ReportContext }> = [];
  for (const { taskIds, run } of products) {
    const results = await reportResults(taskIds, {
      ...deps.download,
      store: deps.store,
      scope: deps.scope,
      ...(run.staged ? { staged: run.staged } : {}),
      onEvent: (event) => deps.onEvent({ ...event, output: "report" }),
    });
    read.push({ read: results.read, context: { changes: run.changes, run: run.record } });
  }
  const html = await chainReportHtml({ origins: deps.download.origins, prices: deps.prices, now: deps.now }, read);
  await publishReport(path, html, force, deps);
}

async function publishReport(path: string | undefined, html: string, force: boolean, deps: ReportWriting): Promise<void> {
  if (isStdout(path)) deps.writeStdout(html);
  else await writeReportFile(deps.absolute(path), html, force);
  deps.onEvent({ type: "report", path: isStdout(path) ? undefined : path });
}

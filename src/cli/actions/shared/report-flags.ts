import { UsageError } from "../../../errors.js";
import { isStdout } from "./destination.js";

/** --report FILE.html of download and submit --wait. */
export interface ReportFlags {
  report?: string;
  output?: string;
  force?: boolean;
}

/** Refuses, before any request, a --report to stdout; its file is checked with the command's other outputs (checkOutputs). */
export function checkReportFlags(flags: ReportFlags): void {
  if (flags.report !== undefined && isStdout(flags.report)) throw new UsageError("--report needs a file name, e.g. --report report.html.");
}

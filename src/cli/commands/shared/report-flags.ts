import { UsageError } from "../../../errors.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { checkDestination, isStdout } from "./destination.js";

/** --report FILE.html of download and submit --wait. */
export interface ReportFlags {
  report?: string;
  output?: string;
  force?: boolean;
}

/** Refuses, before any request, a --report that is stdout, the results file itself, or a file that exists (without --force). */
export function checkReportFlags(ctx: Pick<Context, "cwd">, flags: ReportFlags): void {
  if (flags.report === undefined) return;
  if (isStdout(flags.report)) throw new UsageError("--report needs a file name, e.g. --report report.html.");
  if (!isStdout(flags.output) && absolutePath(ctx, flags.report) === absolutePath(ctx, flags.output)) {
    throw new UsageError("--report and -o name the same file.", { hint: "Give the report its own name, e.g. --report report.html." });
  }
  checkDestination(ctx, flags.report, flags.force);
}

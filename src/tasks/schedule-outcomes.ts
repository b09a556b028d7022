import { count } from "../format-count.js";
import type { ApiError } from "../api/errors.js";
import { InterruptedError, PendingError, ServiceUnavailableError } from "../errors.js";

/** What a schedule that ends early says, each with the command that carries on where it stopped. */

/** A 42900 with none of the list's own tasks unfinished: nothing here to wait for (exit 7). */
export function quotaExhausted(refusal: ApiError, resumeCommand: string): ServiceUnavailableError {
  return new ServiceUnavailableError(refusal.message, {
    hint: `None of this list's tasks is unfinished, so other tasks hold the quota and there is nothing here to wait for. Run the same command again later; it carries on where this run stopped: ${resumeCommand}`,
    cause: refusal,
  });
}

export interface TimeoutSettings {
  timeoutMs?: number;
  /** The --timeout the message names, when the schedule got only what was left of it. */
  timeoutSeconds?: number;
  resumeCommand: string;
  /** Whether `bulkcheck wait IDS` is enough once every part is uploaded. */
  waitResumes: boolean;
}

/** --timeout ran out (exit 8): with parts still to upload, tasks still processing, or results still being fetched. */
export function timedOut(o: TimeoutSettings, at: { parts: number; notUploaded: number; processing: readonly string[] }): PendingError {
  const { parts, notUploaded, processing } = at;
  const seconds = o.timeoutSeconds ?? Math.round((o.timeoutMs ?? 0) / 1000);
  const message =
    notUploaded > 0
      ? `Stopped after ${seconds}s with ${count(notUploaded)} of ${count(parts)} part(s) not uploaded yet.`
      : processing.length > 0
        ? `Still processing after ${seconds}s: ${processing.join(", ")}.`
        : `Stopped after ${seconds}s while fetching the results.`;
  const resume = notUploaded === 0 && processing.length > 0 && o.waitResumes ? `bulkcheck wait ${processing.join(" ")}` : o.resumeCommand;
  return new PendingError(message, processing, { hint: `The tasks go on by themselves. Resume with: ${resume}` });
}

/** Ctrl-C (exit 130). */
export function interrupted(resumeCommand: string): InterruptedError {
  return new InterruptedError("Stopped. The tasks already created are not affected.", { hint: `Resume with: ${resumeCommand}` });
}

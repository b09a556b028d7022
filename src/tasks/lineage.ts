import { BulkcheckError } from "../errors.js";
import type { JournalRecord } from "../journal/journal.js";

/** Retries of retries deeper than this are a journal gone wrong, not a list worth another try. */
const MAX_RETRY_DEPTH = 100;

/**
 * A task and the tasks it retried, newest first, from the journal's `retry_of`
 * links. The walk is bounded: a link back into the chain (a task recorded as a
 * retry of itself, as older versions could write) or a chain over
 * MAX_RETRY_DEPTH retries is an error (exit 1), never an endless rebuild.
 */
export function retryLineage(records: readonly JournalRecord[], taskId: string): string[] {
  const byTask = new Map<string, JournalRecord>();
  for (const record of records) if (record.taskId) byTask.set(record.taskId, record);
  const lineage = [taskId];
  for (let parent = byTask.get(taskId)?.submit.retry_of; parent !== undefined; parent = byTask.get(parent)?.submit.retry_of) {
    if (lineage.includes(parent)) {
      throw new BulkcheckError(
        "unexpected",
        `The local journal records task ${lineage.at(-1)} as a retry of ${parent}, which goes round in a circle (${[...lineage, parent].join(" → ")}), so the numbers it was given cannot be worked out.`,
        { hint: "Retry the list's first task instead, or submit the list again with --resubmit." },
      );
    }
    if (lineage.length > MAX_RETRY_DEPTH) {
      throw new BulkcheckError(
        "unexpected",
        `Task ${taskId} is more than ${MAX_RETRY_DEPTH} retries deep in the local journal; no retry is made.`,
        {
          hint: "These numbers keep getting no result: check them another way, or submit the list again with --resubmit.",
        },
      );
    }
    lineage.push(parent);
  }
  return lineage;
}

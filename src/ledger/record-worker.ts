/**
 * Worker thread entry: records one task's result in the ledger from its file, on a database
 * connection of its own (see recordResultFile), while the main thread goes on. Loaded from
 * dist/ at runtime (recording.ts). Messages in: how far the file has grown, that it is
 * complete, and when its turn to insert comes; out: that its rows are collected, then how
 * many were recorded, or the failure.
 */
import { parentPort, workerData } from "node:worker_threads";
import { failureMessage, GrowingFile, recordResultFile, type RecordingJob } from "./record-result-file.js";
import type { FromRecording, ToRecording } from "./recording.js";

const port = parentPort!;
const job = workerData as RecordingJob;
const file = new GrowingFile(job.path);
let insert: ((at: string) => void) | undefined;
/** The command stopped (Ctrl-C, SIGTERM, --timeout): a connection still being made is given up. */
const stopped = new AbortController();
const send = (message: FromRecording) => port.postMessage(message);

port.on("message", (message: ToRecording) => {
  if ("grew" in message) file.grew(message.grew);
  else if ("completed" in message) file.completed(message.completed);
  else if ("insert" in message) insert?.(message.insert);
  else stopped.abort(new Error(message.stop));
});

recordResultFile(
  job,
  file,
  () => {
    send({ collected: true });
    return new Promise<string>((resolve) => (insert = resolve));
  },
  stopped.signal,
).then(
  (rows) => send({ recorded: rows }),
  (error: unknown) => send({ failed: failureMessage(error) }),
);

import { ApiCode } from "../../spec/codes.js";
import type { SandboxCore } from "../core.js";
import type { Exchange } from "../exchange.js";
import { parseScriptedFaults } from "../faults.js";
import { buildState } from "../state.js";

const MAX_ADMIN_BODY_BYTES = 1024 * 1024;

/**
 * Admin endpoints, outside the service's API and never faulted. Both need the
 * sandbox's X-API-Key and answer with the usual envelope.
 *
 * `GET /_sandbox/state` → data: `SandboxState` (see state.ts):
 *   { balance_micros, reserved_micros, start_balance_micros, prices,
 *     tasks: [Task (fuller variant) + idempotency_key_present],
 *     ledger: [{ at, task_id, kind: "reserve"|"charge"|"refund", micros }],
 *     stats: { requests, by_route, faults_injected: {kind: count}, fast_polls,
 *              api_key_sent_to_result_host, slots_in_flight },
 *     scripted_faults_pending }
 *   Finished tasks are settled first, as with a balance read.
 *
 * `POST /_sandbox/faults` with a JSON array of ScriptedFault, e.g.
 *   [{"route":"submit","fault":"42901","retryAfter":"2","times":3}]
 *   → data: { queued: <entries>, pending: <requests still to be faulted> };
 *   40001 for a body that is not JSON, 40000 for an invalid entry (nothing queued).
 */
export async function handleState(ex: Exchange, core: SandboxCore): Promise<void> {
  const nowMs = core.options.now();
  await core.tasks.refreshAll(nowMs);
  ex.envelope(ApiCode.OK, "success", buildState(core, nowMs));
}

/**
 * `GET /_sandbox/tasks/{id}/lines` → data: { id, lines: [the uploaded file's lines] }: what a
 * task was given, to check which numbers a script bought (40000 for an unknown id).
 */
export function handleTaskLines(ex: Exchange, core: SandboxCore, id: string): void {
  const task = core.tasks.get(id);
  if (!task) return ex.envelope(ApiCode.UNSUPPORTED_OR_CONFLICT, "no such task");
  ex.envelope(ApiCode.OK, "success", { id, lines: uploadedLines(task) });
}

/** A task's uploaded lines. */
export function uploadedLines(task: { uploaded: string }): string[] {
  return task.uploaded === "" ? [] : task.uploaded.split("\n");
}

export async function handleScriptFaults(ex: Exchange, core: SandboxCore): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ex.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ADMIN_BODY_BYTES) return ex.envelope(ApiCode.UNSUPPORTED_OR_CONFLICT, "fault list is too large");
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return ex.envelope(ApiCode.INVALID_JSON, "invalid JSON body: expected a JSON array of faults");
  }
  let faults;
  try {
    faults = parseScriptedFaults(body);
  } catch (error) {
    return ex.envelope(ApiCode.UNSUPPORTED_OR_CONFLICT, (error as Error).message);
  }
  core.faults.script(faults);
  ex.envelope(ApiCode.OK, "success", { queued: faults.length, pending: core.faults.pending() });
}

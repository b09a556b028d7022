import { ApiCode } from "../../spec/codes.js";
import { DEFAULT_LIMITS } from "../../spec/products.js";
import type { SandboxCore } from "../core.js";
import type { Exchange } from "../exchange.js";
import { NOT_FOUND_STATUS } from "../http-status.js";
import { taskView } from "../task-view.js";

const TASK_ID = /^[0-9a-f]{32}$/;
const POLL_FLOOR_MS = DEFAULT_LIMITS.pollFloorSeconds * 1000;

/**
 * `GET /api/v1/bulk-tasks/{id}`. A malformed id is 400/40000, an unknown one
 * 404/40000. Polling a processing task within 30 s of its previous submit or
 * check is served but counted in `stats.fast_polls` and marked in the log.
 */
export async function handleCheck(ex: Exchange, core: SandboxCore, id: string): Promise<void> {
  if (!TASK_ID.test(id)) return ex.envelope(ApiCode.UNSUPPORTED_OR_CONFLICT, "task id must be 32 lowercase hexadecimal characters");
  const task = core.tasks.get(id);
  if (!task) return ex.envelope(ApiCode.UNSUPPORTED_OR_CONFLICT, `task ${id} not found`, {}, {}, NOT_FOUND_STATUS);
  const nowMs = core.options.now();
  const phase = await core.tasks.observe(task, nowMs);
  if (task.lastContact.processing && nowMs - task.lastContact.atMs < POLL_FLOOR_MS) {
    core.stats.countFastPoll();
    ex.mark("fast-poll");
  }
  task.lastContact = { atMs: nowMs, processing: phase.status === "processing" };
  ex.envelope(ApiCode.OK, "success", taskView(task, phase, core.viewAt(nowMs)));
}

import { ApiError, RefusedTaskError } from "../api/errors.js";
import type { ApiClient } from "../api/types.js";
import { InputRejectedError, ProtocolError, ServiceUnavailableError } from "../errors.js";
import { ApiCode } from "../spec/codes.js";
import type { Task } from "../spec/task.js";
import type { Scope, Store } from "../store/store.js";
import type { PlannedUpload, UploadResult } from "../tasks/submit.js";

/** What uploading a run's part needs. */
export interface UploadContext {
  client: Pick<ApiClient, "submitTask">;
  store: Store;
  product: string;
  country: string | undefined;
  /** For a retry: the task whose numbers it holds (the service must not answer with that same task). */
  retryOf?: string;
  now: () => number;
}

/**
 * Uploads one part of a run. Its task row, with its idempotency key, was written when
 * the run was planned, before any attempt; the task id is written as soon as the
 * service answers, so a run killed at any moment is continued without a second task.
 * An answer whose task id is sound but another field is refused still records the id
 * (see keepRefusedTask): the service may have reserved money for it.
 */
export async function uploadPart(context: UploadContext, upload: PlannedUpload): Promise<UploadResult> {
  const country = upload.country ?? context.country;
  const { task, replayed } = await context.client
    .submitTask({
      serviceType: context.product,
      ...(country ? { country } : {}),
      file: upload.path,
      fileName: upload.of === 1 ? "numbers.txt" : `numbers-${upload.index + 1}-of-${upload.of}.txt`,
      idempotencyKey: upload.idempotencyKey,
    })
    .catch(async (error: unknown) => {
      if (error instanceof RefusedTaskError && error.taskId !== context.retryOf) throw await keepRefusedTask(context, upload, error);
      throw explainKeyConflict(error, upload.idempotencyKey);
    });
  if (context.retryOf === task.id) {
    throw new ProtocolError(`The service answered a retry of task ${task.id} with that same task; it was not recorded as its own retry.`, {
      hint: "Check that --base-url points at the bulk-checking service.",
    });
  }
  // A replay of a key this run never saw answered may be the service's task for another list (a fixed
  // --idempotency-key used elsewhere): it must at least be a task of this product, country and size.
  if (replayed && upload.knownTask === undefined) {
    assertSamePart(task, upload, context.product, country);
    assertNotOlder(task, upload);
  }
  await context.store.tasks.update(upload.ref, {
    taskId: task.id,
    createdAt: task.created_at,
    status: task.status,
    replayed,
    ...(task.total === undefined ? {} : { total: task.total }),
  });
  // A replayed task may have finished already (a run killed after its upload, continued later): this answer is
  // the first to see it succeeded, so it dates the task's results, as a check would.
  if (task.status === "success") await noteTaskState(context.store, upload.ref, task, context.now);
  return { upload, task, replayed };
}

/**
 * The service answered the upload with a task id and a field the client refuses (a
 * created_at that is no timestamp): the task may exist at the service with its money
 * reserved. Its id goes into the part's row before anything else, so the task is never
 * lost: the run stays open, and the same command carries it on, checking that task (the
 * same key would replay it anyway) instead of uploading again. Exit 7, as for a service
 * that answers badly for a while, not 1: nothing here is a bulkcheck bug.
 */
async function keepRefusedTask(context: UploadContext, upload: PlannedUpload, error: RefusedTaskError): Promise<ServiceUnavailableError> {
  await context.store.tasks.update(upload.ref, { taskId: error.taskId });
  const part = upload.of === 1 ? "the upload" : `part ${upload.index + 1} of ${upload.of}`;
  return new ServiceUnavailableError(
    `The service took ${part} as task ${error.taskId}, but answered with ${error.refused}. The task is kept in this run and goes on at the service.`,
    {
      hint: `Run the same command again: it carries the run on and follows task ${error.taskId} (bulkcheck status ${error.taskId} shows it). If the service keeps answering so, check that --base-url points at the bulk-checking service, or upgrade bulkcheck.`,
      cause: error,
    },
  );
}

/**
 * Refuses (exit 3) a task the service returned for this part's key that cannot be this
 * part's: another product or country, or another number of lines than were uploaded.
 */
function assertSamePart(task: Task, upload: PlannedUpload, product: string, country: string | undefined): void {
  const lines = task.submitted_lines ?? task.total;
  const differs = [
    task.product !== product && `product ${task.product}`,
    country !== undefined && task.country !== country && `country ${task.country}`,
    (task.submitted_lines === undefined ? task.total > upload.count : lines !== upload.count) && `${lines} lines`,
  ].filter(Boolean);
  if (differs.length === 0) return;
  throw new InputRejectedError(
    `The service returned task ${task.id} for the idempotency key "${upload.idempotencyKey}", but that task has ${differs.join(", ")}, ` +
      `not this part's ${product}${country ? ` ${country}` : ""} of ${upload.count} lines: the key was used before for another list. Nothing was reserved for this part.`,
    { hint: "Give each list its own --idempotency-key, or leave it out: bulkcheck derives a new key for every run." },
  );
}

/** How far the service's clock may run behind this machine's before a replayed task counts as older than its key. */
const CLOCK_SKEW_MS = 60_000;

/**
 * Refuses (exit 3) a replayed task created before this part's key was written: an answer
 * for the same --idempotency-key used earlier (from another profile, another machine, or a
 * store since removed), never this part's own lost answer.
 */
function assertNotOlder(task: Task, upload: PlannedUpload): void {
  if (upload.keyWrittenAt === undefined) return;
  const created = Date.parse(task.created_at);
  if (!(created < Date.parse(upload.keyWrittenAt) - CLOCK_SKEW_MS)) return;
  throw new InputRejectedError(
    `The service returned task ${task.id}, created ${task.created_at}, for the idempotency key "${upload.idempotencyKey}", which this run first used at ${upload.keyWrittenAt}: ` +
      "the key was used before, elsewhere, for another upload. Nothing was reserved for this part.",
    {
      hint: "Give each run its own --idempotency-key (for example with the date in it), or leave it out: bulkcheck derives a new key for every run.",
    },
  );
}

/**
 * The service holds the key for another file (one submitted elsewhere, so the store
 * could not tell): it answers 42200 naming the Idempotency-Key. Still a rejected input
 * (exit 3), said in terms of the key rather than the file's form.
 */
function explainKeyConflict(error: unknown, key: string): unknown {
  if (!(error instanceof ApiError) || error.apiCode !== ApiCode.UNPROCESSABLE || !/idempotency/i.test(error.serviceMessage)) return error;
  return new InputRejectedError(
    `The service already holds the idempotency key "${key}" for a different file (42200: "${error.serviceMessage}"); nothing was uploaded.`,
    { hint: "Give each list its own --idempotency-key, or leave it out: bulkcheck derives a new key for every run.", cause: error },
  );
}

/** An upload that began longer ago than this without a task is taken for dead (its process killed). */
const UPLOAD_PRESUMED_DEAD_MS = 10 * 60_000;

export interface UploadSlotDeps {
  store: Store;
  scope: Scope;
  /** The service's limit of uploads at once, per account: shared by every machine on the store. */
  maxInFlight: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  signal: AbortSignal;
}

/**
 * Runs a part's upload once the account has room for it across every machine sharing the
 * store: the upload is marked as under way, and if that makes more than `maxInFlight` the
 * mark is taken back and tried again a moment later (marking first, then counting, so two
 * machines never both see room that only one has). The mark ends with the task id, or is
 * taken back when the upload fails without one.
 */
export async function inUploadSlot<T>(deps: UploadSlotDeps, ref: number, upload: () => Promise<T>): Promise<T> {
  const { store } = deps;
  for (;;) {
    await store.tasks.markUploading(ref, new Date(deps.now()).toISOString());
    const { uploading } = await store.tasks.activity(deps.scope, new Date(deps.now() - UPLOAD_PRESUMED_DEAD_MS).toISOString());
    if (uploading <= deps.maxInFlight) break;
    await store.tasks.markUploading(ref, undefined);
    await deps.sleep(200 + deps.random() * 800, deps.signal);
  }
  try {
    return await upload();
  } catch (error) {
    await store.tasks.markUploading(ref, undefined);
    throw error;
  }
}

/**
 * Keeps what a check outside a run saw of tasks this store knows (`status`, `wait`, a
 * download): a task seen finished no longer counts as unfinished, so the money it held
 * reserved (`balance`) is no longer counted, and the first check to see it succeeded dates
 * its results. A task still processing, one the store does not know, and one it knows
 * finished already are left as they are.
 */
export async function noteSeenTasks(store: Store, scope: Scope, tasks: readonly Task[], now: () => number): Promise<void> {
  for (const task of tasks) {
    if (task.status === "processing") continue;
    const row = await store.tasks.byId(scope, task.id);
    if (row && (row.status === undefined || row.status === "processing")) await noteTaskState(store, row.ref, task, now);
  }
}

/** Keeps a task's latest state in the store; the first check that sees it succeeded dates its results. */
export async function noteTaskState(store: Store, ref: number, task: Task, now: () => number): Promise<void> {
  await store.tasks.update(ref, {
    status: task.status,
    total: task.total,
    ...(task.success_cnt === undefined ? {} : { successCnt: task.success_cnt }),
    ...(task.failure_cnt === undefined ? {} : { failureCnt: task.failure_cnt }),
    ...(task.status === "success" ? { checkedAt: new Date(now()).toISOString() } : {}),
  });
}

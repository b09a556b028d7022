import { subscribe } from "node:diagnostics_channel";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import type { ApiClient } from "../../src/api/types.js";
import { InterruptedError, PendingError, ServiceUnavailableError, TaskFailedError } from "../../src/errors.js";
import { uploadPart } from "../../src/run/uploads.js";
import { startSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/index.js";
import type { Task } from "../../src/spec/task.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Scope } from "../../src/store/store.js";
import { scheduleParts, type ScheduleEvent, type ScheduleOptions } from "../../src/tasks/schedule.js";
import type { Chunk, PlannedUpload } from "../../src/tasks/submit.js";
import { tempDir } from "../helpers/cli.js";
import { uploadParts } from "../helpers/upload-parts.js";

const RESUME = "bulkcheck submit list.txt --type carrier_batch";
const SCOPE: Scope = { baseUrl: "http://127.0.0.1", profile: "default" };
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((resource) => resource.close()));
});

function openStore(): SqliteStore {
  const store = SqliteStore.open(join(tempDir(), "bulkcheck.db"));
  open.push(store);
  return store;
}

/**
 * The parts as a run plans them: each with its task row and idempotency key in the store
 * before any upload (the row of a part planned before is used again), and the task the
 * caller found each part already has, if any.
 */
async function plannedUploads(store: SqliteStore, chunks: readonly Chunk[], known: ReadonlyMap<number, Task>): Promise<PlannedUpload[]> {
  const uploads: PlannedUpload[] = [];
  for (const [index, chunk] of chunks.entries()) {
    const idempotencyKey = `run-1-part-${index}-${chunk.sha256}`;
    const row =
      (await store.tasks.withKey(SCOPE, idempotencyKey)) ??
      (await store.tasks.add({ scope: SCOPE, part: index, parts: chunks.length, idempotencyKey, product: "carrier_batch", country: "GB" }));
    const task = known.get(index);
    uploads.push({ ...chunk, index, of: chunks.length, idempotencyKey, ref: row.ref, ...(task ? { knownTask: task } : {}) });
  }
  return uploads;
}

interface ScheduleExtra extends Partial<ScheduleOptions> {
  /** The tasks the parts (by index) already have, as the caller checked them: followed, not uploaded. */
  known?: ReadonlyMap<number, Task>;
  /** Uploads go through this instead of the client's. */
  submitTask?: ApiClient["submitTask"];
}

/** Requests of this process's undici not yet answered in full (its diagnostics channels). */
let requestsInFlight = 0;
subscribe("undici:request:create", () => requestsInFlight++);
subscribe("undici:request:trailers", () => requestsInFlight--);
subscribe("undici:request:error", () => requestsInFlight--);

/** Resolves once no request has been in flight for two turns of the event loop. */
async function requestsSettled(): Promise<void> {
  for (let quiet = 0; quiet < 2;) {
    await new Promise((resolve) => setImmediate(resolve));
    quiet = requestsInFlight === 0 ? quiet + 1 : 0;
  }
}

/**
 * A real sandbox and client sharing a clock that moves only when something sleeps,
 * so that waiting for tasks costs no real time; `schedule` runs the parts of `sizes`,
 * uploading each as a run does (its task id written to its row in `store`). A request
 * takes no time on that clock: a sleep begun meanwhile (the scheduler sleeps while its
 * checks are in flight) moves the clock only once the requests are answered, or a busy
 * machine would move it while an upload is on its way and date the task later.
 */
async function setup(options: Partial<SandboxOptions> = {}, store = openStore(), sizes = [10, 11, 12, 13, 14, 15]) {
  const clock = { ms: Date.UTC(2025, 0, 15, 9) };
  const now = () => clock.ms;
  const sleep = async (ms: number, signal?: AbortSignal) => {
    signal?.throwIfAborted();
    await requestsSettled();
    clock.ms += ms;
    await new Promise((resolve) => setImmediate(resolve));
  };
  const sandbox: Sandbox = await startSandbox({ now, minTaskSize: 1, noResultRate: 0, ...options });
  const client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, sleep, now });
  open.push(client, sandbox);
  const events: ScheduleEvent[] = [];
  const chunks = uploadParts(sizes);
  const schedule = async (count: number, { known = new Map(), submitTask, ...extra }: ScheduleExtra = {}) => {
    const context = { client: submitTask ? { submitTask } : client, store, product: "carrier_batch", country: "GB", now };
    return scheduleParts({
      uploads: await plannedUploads(store, chunks.slice(0, count), known),
      upload: (upload) => uploadPart(context, upload),
      client,
      now,
      sleep,
      random: () => 0,
      maxInFlight: 5,
      pollIntervalMs: 1000,
      untilFinished: false,
      resumeCommand: RESUME,
      waitResumes: true,
      onEvent: (event) => events.push(event),
      ...extra,
    });
  };
  return { sandbox, client, clock, events, store, schedule };
}

/** The parts' tasks by part index, for a schedule that follows them. */
const byPart = (results: ReadonlyArray<{ upload: PlannedUpload; task: Task }>) =>
  new Map(results.map((result) => [result.upload.index, result.task]));

const submits = (sandbox: Sandbox) => sandbox.inspect().stats.by_route.submit ?? 0;

describe("scheduleParts", () => {
  it("uploads more parts than the quota of unfinished tasks allows, each waiting for one of its own tasks to finish", async () => {
    const { sandbox, events, schedule } = await setup({ maxUnfinished: 2 });
    const results = await schedule(6);
    expect(results.map((result) => result.upload.index)).toEqual([0, 1, 2, 3, 4, 5]);
    const tasks = sandbox.inspect().tasks;
    expect(tasks).toHaveLength(6);
    expect(new Set(results.map((result) => result.task.id))).toEqual(new Set(tasks.map((task) => task.id)));
    expect(tasks.map((task) => task.submitted_lines).sort()).toEqual([10, 11, 12, 13, 14, 15]);
    // Some uploads were refused with 42900 and sent again once there was room.
    expect(submits(sandbox)).toBeGreaterThan(6);
    expect(events.filter((event) => event.type === "quota").length).toBeGreaterThan(0);
  });

  it("with untilFinished, waits for every task and hands each succeeded task over once, as soon as it is seen finished", async () => {
    const { sandbox, schedule } = await setup({ maxUnfinished: 2 });
    const handed: string[] = [];
    const results = await schedule(5, {
      untilFinished: true,
      onSucceeded: async (result) => {
        expect(result.task.status).toBe("success");
        expect(result.task.result_url).toBeDefined();
        handed.push(result.task.id);
      },
    });
    expect(results.map((result) => result.task.status)).toEqual(["success", "success", "success", "success", "success"]);
    expect(handed.sort()).toEqual(results.map((result) => result.task.id).sort());
    expect(sandbox.inspect().tasks).toHaveLength(5);
  });

  it("ends on a 42900 when none of its tasks is unfinished, naming the command that carries on", async () => {
    const { sandbox, schedule } = await setup();
    sandbox.scriptFaults([{ route: "submit", fault: "42900" }]);
    const refused = schedule(1);
    await expect(refused).rejects.toThrow(ServiceUnavailableError);
    await expect(refused).rejects.toThrow("(42900)");
    await expect(refused).rejects.toMatchObject({
      hint: expect.stringContaining(`carries on where this run stopped: ${RESUME}`) as unknown,
    });
    expect(sandbox.inspect().tasks).toEqual([]);
  });

  it("writes each part's task to its row in the store, under the part's key", async () => {
    const { store, schedule } = await setup();
    const results = await schedule(3);
    for (const result of results) {
      expect(await store.tasks.withKey(SCOPE, result.upload.idempotencyKey)).toMatchObject({
        ref: result.upload.ref,
        taskId: result.task.id,
        replayed: false,
      });
    }
  });

  it("follows the tasks its parts already have instead of uploading them again", async () => {
    const { sandbox, schedule } = await setup();
    const first = await schedule(3);
    const before = submits(sandbox);
    const again = await schedule(3, { known: byPart(first) });
    expect(submits(sandbox)).toBe(before);
    expect(again.map((result) => [result.task.id, result.replayed])).toEqual(first.map((result) => [result.task.id, true]));
  });

  it("checks a task its part already has again at the next interval when the check fails for a passing reason", async () => {
    const { sandbox, events, schedule } = await setup({ numbersPerSecond: 1 });
    const [first] = await schedule(1);
    expect(first!.task.status).toBe("processing");
    const before = submits(sandbox);
    sandbox.scriptFaults([{ route: "check", fault: "50300" }]);
    const [again] = await schedule(1, { known: byPart([first!]), untilFinished: true });
    expect(again!.task).toMatchObject({ id: first!.task.id, status: "success" });
    expect(submits(sandbox)).toBe(before);
    expect(events.filter((event) => event.type === "check-failed")).toEqual([
      expect.objectContaining({ taskId: first!.task.id }) as unknown,
    ]);
  });

  it("uploads again, under the same key, a part whose stored task the service does not know", async () => {
    const store = openStore();
    const first = await (await setup({}, store)).schedule(1);
    const elsewhere = await setup({}, store);
    // The caller found that the service does not know the stored task, so it gives no known task.
    const again = await elsewhere.schedule(1);
    expect(again[0]!.task.id).not.toBe(first[0]!.task.id);
    expect(elsewhere.sandbox.inspect().tasks.map((task) => task.id)).toEqual([again[0]!.task.id]);
    expect(again[0]!.upload.idempotencyKey).toBe(first[0]!.upload.idempotencyKey);
    expect(await store.tasks.withKey(SCOPE, first[0]!.upload.idempotencyKey)).toMatchObject({
      ref: first[0]!.upload.ref,
      taskId: again[0]!.task.id,
    });
  });

  it("gives up at the timeout, with the parts not yet uploaded and the command that carries on", async () => {
    const { sandbox, schedule } = await setup({ maxUnfinished: 1, numbersPerSecond: 1 });
    const stopped = schedule(3, { timeoutMs: 5_000 });
    await expect(stopped).rejects.toThrow(PendingError);
    await expect(stopped).rejects.toThrow("Stopped after 5s with 2 of 3 part(s) not uploaded yet.");
    await expect(stopped).rejects.toMatchObject({ hint: `The tasks go on by themselves. Resume with: ${RESUME}` });
    expect(sandbox.inspect().tasks).toHaveLength(1);
  });

  it("counts what is left at the timeout once the uploads under way then are recorded, as the progress does", async () => {
    const { sandbox, client, clock, events, schedule } = await setup({ numbersPerSecond: 1 });
    const deadline = clock.ms + 5_000;
    let uploads = 0;
    // The second upload is answered only once the checks of the others have moved the clock past the deadline.
    const submitTask: typeof client.submitTask = async (request) => {
      if (++uploads === 2) while (clock.ms < deadline) await new Promise((resolve) => setImmediate(resolve));
      return client.submitTask(request);
    };
    const stopped = schedule(3, { submitTask, untilFinished: true, timeoutMs: 5_000 });
    await expect(stopped).rejects.toThrow(PendingError);
    const uploaded = events.flatMap((event) => (event.type === "uploaded" ? [event.result] : []));
    expect(uploaded).toHaveLength(3);
    // Every part has its task by the time the run ends: none is "not uploaded yet".
    const ids = uploaded.sort((a, b) => a.upload.index - b.upload.index).map((result) => result.task.id);
    await expect(stopped).rejects.toThrow(`Still processing after 5s: ${ids.join(", ")}.`);
    expect(sandbox.inspect().tasks).toHaveLength(3);
  });

  it("says to resume with bulkcheck wait when every part is uploaded and nothing else is left to do", async () => {
    const { schedule } = await setup({ numbersPerSecond: 1 });
    const stopped = schedule(2, { untilFinished: true, timeoutMs: 5_000 });
    await expect(stopped).rejects.toThrow(/^Still processing after 5s: [0-9a-f]{32}, [0-9a-f]{32}\.$/);
    await expect(stopped).rejects.toMatchObject({
      hint: expect.stringMatching(/Resume with: bulkcheck wait [0-9a-f]{32} [0-9a-f]{32}$/) as unknown,
    });
  });

  it("stops when interrupted, saying how to carry on", async () => {
    const { schedule } = await setup({ numbersPerSecond: 1 });
    const controller = new AbortController();
    const stopped = schedule(2, { untilFinished: true, signal: controller.signal, onEvent: () => controller.abort() });
    await expect(stopped).rejects.toThrow(InterruptedError);
    await expect(stopped).rejects.toMatchObject({ hint: `Resume with: ${RESUME}` });
  });

  it("with untilFinished, reports failed tasks once every task has finished, and hands none of them over", async () => {
    const { sandbox, schedule } = await setup({ failRate: 1 });
    const handed: string[] = [];
    const failed = schedule(3, { untilFinished: true, onSucceeded: async (result) => void handed.push(result.task.id) });
    await expect(failed).rejects.toThrow(TaskFailedError);
    await expect(failed).rejects.toThrow("3 task(s) failed");
    expect(handed).toEqual([]);
    expect(sandbox.inspect().tasks.every((task) => task.status === "failed")).toBe(true);
  });

  it("tolerates a check that fails for a passing reason, and tries it again at the next interval", async () => {
    const { sandbox, events, schedule } = await setup();
    sandbox.scriptFaults([{ route: "check", fault: "50300" }]);
    const results = await schedule(1, { untilFinished: true });
    expect(results[0]!.task.status).toBe("success");
    expect(events.filter((event) => event.type === "check-failed")).toHaveLength(1);
  });

  it("at the service's 30 s floor, aims each task's checks at its finish foreseen from the tasks before, never checking one sooner than 30 s apart", async () => {
    // One unfinished task at a time, each of 12 numbers at 4 s a number: 48.5 s from upload to finish.
    const { clock, schedule } = await setup({ maxUnfinished: 1, numbersPerSecond: 0.25 }, openStore(), Array<number>(8).fill(12));
    const asked = new Map<string, number[]>();
    await schedule(8, {
      untilFinished: true,
      pollIntervalMs: 30_000,
      onEvent: (event) => {
        if (event.type === "uploaded") asked.set(event.result.task.id, [clock.ms]);
        if (event.type === "checked") asked.get(event.task.id)!.push(clock.ms);
      },
    });
    const tasks = [...asked.values()];
    for (const times of tasks) for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(30_000);
    // Checked every 30 s from its upload, each task would be seen 60 s after it, 11.5 s after finishing.
    expect(tasks[0]!.at(-1)! - tasks[0]![0]!).toBe(60_000);
    for (const times of tasks.slice(4)) expect(times.at(-1)! - times[0]! - 48_500).toBeLessThan(1_000);
  });

  it("sends the next part's upload before fetching the result of the task whose finishing made room for it", async () => {
    const { client, schedule } = await setup({ maxUnfinished: 1 });
    const order: string[] = [];
    const submitTask: typeof client.submitTask = (request) => {
      order.push("upload");
      return client.submitTask(request);
    };
    await schedule(3, { submitTask, untilFinished: true, onSucceeded: async () => void order.push("fetch") });
    // Three uploads at first (those past the quota refused with 42900), then the first task seen finished lets one go before its result is fetched.
    expect(order.slice(3, 5)).toEqual(["upload", "fetch"]);
    expect(order.filter((step) => step === "fetch")).toHaveLength(3);
  });

  it("gives up on the tenth failed check of a task in a row, as wait does, with the failure itself", async () => {
    const { sandbox, events, schedule } = await setup();
    sandbox.scriptFaults(Array.from({ length: 10 }, () => ({ route: "check" as const, fault: "50300" as const })));
    await expect(schedule(1, { untilFinished: true })).rejects.toMatchObject({ kind: "unavailable", apiCode: 50300 });
    expect(events.filter((event) => event.type === "check-failed")).toHaveLength(9);
  });
});

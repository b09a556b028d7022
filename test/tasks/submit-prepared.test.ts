import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/client.js";
import type { ApiClient, SubmitTaskInput } from "../../src/api/types.js";
import { InsufficientBalanceError, InputRejectedError, InterruptedError } from "../../src/errors.js";
import { Journal, recordWithKey } from "../../src/journal/journal.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import type { Task } from "../../src/spec/task.js";
import type { Chunk } from "../../src/tasks/submit.js";
import { submitPrepared, type PreparedSubmission, type SubmitDeps, type SubmitPlan } from "../../src/tasks/submit-prepared.js";
import { API_KEY, FULL_TASK, sendEnvelope, startServer } from "../api/scripted-server.js";
import { tempDir } from "../helpers/cli.js";
import { uploadParts } from "../helpers/upload-parts.js";

const PRICE = 1000;
const SCOPE = { base_url: "http://127.0.0.1:8787", profile: "default" };
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((resource) => resource.close()));
});

function submission(parts: Chunk[]): PreparedSubmission {
  return { product: "carrier_batch", country: "GB", chunks: parts, entry: { source: { path: "/data/list.txt" } } };
}

interface Recorded {
  plans: SubmitPlan[];
  reported: string[];
  clientsBuilt: number;
}

/** Deps around `client`, recording what the task reports. */
function recordingDeps(client: Pick<ApiClient, "getBalance" | "submitTask" | "checkTask">, journal = new Journal(tempDir())) {
  const recorded: Recorded = { plans: [], reported: [], clientsBuilt: 0 };
  const deps: SubmitDeps = {
    client: async () => {
      recorded.clientsBuilt++;
      return client;
    },
    journal,
    installSecret: async () => "install-secret",
    limits: { minTaskSize: 1, maxFileBytes: 1_000_000, maxInFlight: 5 },
    priceMicros: PRICE,
    scope: SCOPE,
    now: Date.now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    random: () => 0,
    schedule: async () => ({ pollIntervalMs: 10, untilFinished: false, resumeCommand: "bulkcheck submit list.txt", waitResumes: true }),
    onPlan: (plan) => recorded.plans.push(plan),
    onTask: (result) => recorded.reported.push(result.task.id),
  };
  return { deps, recorded };
}

/** Deps with a real client of a real sandbox on 127.0.0.1:0. */
async function sandboxDeps(options: { balanceMicros?: number; journal?: Journal } = {}) {
  const sandbox: Sandbox = await startSandbox({
    port: 0,
    minTaskSize: 1,
    balanceMicros: options.balanceMicros ?? 10_000_000,
    prices: { carrier_batch: PRICE },
  });
  const client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  open.push(client, sandbox);
  return { sandbox, ...recordingDeps(client, options.journal) };
}

describe("submitPrepared", () => {
  it("uploads every part, reports the tasks in list order and journals each with its key", async () => {
    const { sandbox, deps, recorded } = await sandboxDeps();
    const results = await submitPrepared(deps, submission(uploadParts([3, 2, 4])), {});
    expect(results?.map((result) => result.upload.index)).toEqual([0, 1, 2]);
    expect(recorded.reported).toEqual(results?.map((result) => result.task.id));
    expect(recorded.plans).toEqual([
      { numbers: 9, tasks: 3, product: "carrier_batch", country: "GB", priceMicros: PRICE, reservationMicros: 9 * PRICE },
    ]);
    expect(
      sandbox
        .inspect()
        .tasks.map((task) => task.total)
        .sort(),
    ).toEqual([2, 3, 4]);
    for (const result of results ?? []) {
      const record = recordWithKey(await deps.journal.records(), result.upload.idempotencyKey, SCOPE);
      expect(record?.taskId).toBe(result.task.id);
      expect(record?.submit).toMatchObject({
        profile: "default",
        source: { path: "/data/list.txt" },
        chunk: { index: result.upload.index, of: 3 },
      });
    }
  });

  it("returns the same tasks for the same list without reserving again, and asks nothing", async () => {
    const journal = new Journal(tempDir());
    const { sandbox, deps } = await sandboxDeps({ journal });
    const parts = uploadParts([3]);
    const first = await submitPrepared(deps, submission(parts), {});
    const asked: number[] = [];
    const again = await submitPrepared(
      { ...deps, confirmReservation: async (micros) => (asked.push(micros), true) },
      submission(parts),
      {},
    );
    expect(again?.map((result) => [result.task.id, result.replayed])).toEqual(first?.map((result) => [result.task.id, true]));
    expect(asked).toEqual([]);
    expect(sandbox.inspect().tasks).toHaveLength(1);
  });

  it("makes a new task for the same list with resubmit", async () => {
    const { sandbox, deps } = await sandboxDeps();
    const parts = uploadParts([3]);
    const first = await submitPrepared(deps, submission(parts), {});
    const again = await submitPrepared(deps, submission(parts), { resubmit: true });
    expect(again?.[0]?.task.id).not.toBe(first?.[0]?.task.id);
    expect(sandbox.inspect().tasks).toHaveLength(2);
  });

  it("refuses a service that answers a retry with the very task being retried, journalling no task for it", async () => {
    const server = await startServer((req, res) =>
      sendEnvelope(req, res, { code: 0, data: req.url === "/api/v1/balance" ? { balance_micros: 10_000_000 } : FULL_TASK }),
    );
    const client = createClient({ baseUrl: server.origin, apiKey: API_KEY });
    open.push(client, server);
    const { deps } = recordingDeps(client);
    const retry = { ...submission(uploadParts([3])), entry: { source: { path: "/data/list.txt" }, retry_of: FULL_TASK.id } };
    await expect(submitPrepared(deps, retry, {})).rejects.toThrow(
      `The service answered a retry of task ${FULL_TASK.id} with that same task`,
    );
    expect((await deps.journal.records()).map((record) => record.taskId)).toEqual([undefined]);
  });

  it("stops a dry run after the plan, without an API client, the install secret or the journal", async () => {
    const { sandbox, deps, recorded } = await sandboxDeps();
    let secretRead = false;
    const result = await submitPrepared({ ...deps, installSecret: async () => ((secretRead = true), "s") }, submission(uploadParts([3])), {
      dryRun: true,
    });
    expect(result).toBeUndefined();
    expect(recorded.plans).toHaveLength(1);
    expect({ clientsBuilt: recorded.clientsBuilt, secretRead, journal: await deps.journal.records() }).toEqual({
      clientsBuilt: 0,
      secretRead: false,
      journal: [],
    });
    expect(sandbox.inspect().stats.requests).toBe(0);
  });

  it("refuses a reservation over the cost ceiling before building a client", async () => {
    const { deps, recorded } = await sandboxDeps();
    const refused = submitPrepared(deps, submission(uploadParts([3])), { maxCostUsd: 0.002 });
    await expect(refused).rejects.toThrow(InsufficientBalanceError);
    await expect(refused).rejects.toThrow("The reservation $0.003 is over --max-cost $0.002.");
    expect(recorded.clientsBuilt).toBe(0);
  });

  it("refuses a reservation the balance cannot cover, uploading nothing", async () => {
    const { sandbox, deps } = await sandboxDeps({ balanceMicros: 2 * PRICE });
    await expect(submitPrepared(deps, submission(uploadParts([3])), {})).rejects.toThrow(
      "The balance $0.002 cannot cover the reservation of $0.003.",
    );
    expect(sandbox.inspect().tasks).toEqual([]);
  });

  it("asks before reserving, with the reservation and the balance, and uploads nothing when declined", async () => {
    const { sandbox, deps } = await sandboxDeps();
    const asked: Array<[number, number]> = [];
    const declined = submitPrepared(
      { ...deps, confirmReservation: async (micros, balance) => (asked.push([micros, balance]), false) },
      submission(uploadParts([3])),
      {},
    );
    await expect(declined).rejects.toThrow(InterruptedError);
    expect(asked).toEqual([[3 * PRICE, 10_000_000]]);
    expect(sandbox.inspect().tasks).toEqual([]);
  });

  it.each([
    [[0], "No number in the list can be checked"],
    [[3, 1], "A task needs at least 2 numbers; this list has 1 to check."],
  ])("refuses parts the service would refuse (%j), before anything else", async (sizes, message) => {
    const { deps, recorded } = await sandboxDeps();
    const refused = submitPrepared({ ...deps, limits: { ...deps.limits, minTaskSize: 2 } }, submission(uploadParts(sizes)), {});
    await expect(refused).rejects.toThrow(InputRejectedError);
    await expect(refused).rejects.toThrow(message);
    expect(recorded.plans).toEqual([]);
  });
});

describe("submitPrepared with uploads that finish out of order", () => {
  /**
   * A client whose uploads finish in the order `finishing` (a real service finishes
   * them in whatever order it likes), and whose upload `failing` is refused.
   */
  function reorderingClient(finishing: number[], failing?: number): Pick<ApiClient, "getBalance" | "submitTask" | "checkTask"> {
    const waiting = new Map<number, () => void>();
    let next = 0;
    const release = () => {
      for (let index = finishing[next]; index !== undefined && waiting.has(index); index = finishing[next]) {
        waiting.get(index)!();
        waiting.delete(index);
        next++;
      }
    };
    return {
      getBalance: async () => ({ balance_micros: 10_000_000 }),
      checkTask: () => Promise.reject(new Error("a new part is not checked before the schedule needs it")),
      async submitTask(input: SubmitTaskInput) {
        const index = Number(/part-(\d+)/.exec(input.file)![1]);
        await new Promise<void>((resolve) => {
          waiting.set(index, resolve);
          release();
        });
        if (index === failing) throw new InputRejectedError(`part ${index} refused`);
        const task: Task = { id: `task-${index}`, product: "carrier_batch", status: "processing", country: "GB", total: 1, created_at: "" };
        return { task, replayed: false };
      },
    };
  }

  it("reports the tasks in list order however the uploads finish", async () => {
    const { deps, recorded } = recordingDeps(reorderingClient([2, 0, 3, 1]));
    await submitPrepared(deps, submission(uploadParts([1, 1, 1, 1])), {});
    expect(recorded.reported).toEqual(["task-0", "task-1", "task-2", "task-3"]);
  });

  it("after a failed upload, still reports every task that was created, in list order", async () => {
    const { deps, recorded } = recordingDeps(reorderingClient([2, 0, 3, 1], 1));
    await expect(submitPrepared(deps, submission(uploadParts([1, 1, 1, 1])), {})).rejects.toThrow("part 1 refused");
    expect(recorded.reported).toEqual(["task-0", "task-2", "task-3"]);
  });
});

import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { inUploadSlot } from "../../src/run/uploads.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { tempDir } from "../helpers/cli.js";

const SCOPE = { baseUrl: "https://api.example.com", profile: "default" };

describe("the account's upload slots, shared through the store", () => {
  it("keeps two machines' uploads together within max-in-flight, and every upload still goes", async () => {
    const path = join(tempDir(), "bulkcheck.db");
    // Two connections to one store: two machines.
    const machines = [SqliteStore.open(path), SqliteStore.open(path)];
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const uploads = machines.flatMap((store, m) =>
      [0, 1, 2].map(async (part) => {
        const task = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: `k-${m}-${part}` });
        const deps = {
          store,
          scope: SCOPE,
          maxInFlight: 2,
          now: Date.now,
          sleep: (ms: number) => delay(ms),
          random: Math.random,
          signal: new AbortController().signal,
        };
        await inUploadSlot(deps, task.ref, async () => {
          most = Math.max(most, ++running);
          await delay(40);
          running--;
          // The service's answer ends the upload, as uploadPart writes it.
          await store.tasks.update(task.ref, { taskId: `t-${m}-${part}` });
          done.push(task.ref);
        });
      }),
    );
    await Promise.all(uploads);
    expect(done).toHaveLength(6);
    expect(most).toBeLessThanOrEqual(2);
    expect(most).toBeGreaterThan(0);
    expect(await machines[0]!.tasks.activity(SCOPE, new Date(0).toISOString())).toMatchObject({ uploading: 0 });
    for (const store of machines) await store.close();
  });

  it("takes the mark back when an upload fails without a task, so it holds no slot", async () => {
    const store = SqliteStore.open(join(tempDir(), "bulkcheck.db"));
    const task = await store.tasks.add({ scope: SCOPE, product: "carrier_batch", idempotencyKey: "k" });
    const deps = {
      store,
      scope: SCOPE,
      maxInFlight: 1,
      now: Date.now,
      sleep: (ms: number) => delay(ms),
      random: Math.random,
      signal: new AbortController().signal,
    };
    await expect(inUploadSlot(deps, task.ref, () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect(await store.tasks.activity(SCOPE, new Date(0).toISOString())).toMatchObject({ uploading: 0 });
    await store.close();
  });
});

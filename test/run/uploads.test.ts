import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { uploadPart } from "../../src/run/uploads.js";
import type { Task } from "../../src/spec/task.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { FULL_TASK } from "../api/scripted-server.js";
import { tempDir } from "../helpers/cli.js";

const SCOPE = { baseUrl: "https://api.example.com", profile: "default" };

describe("uploading a run's part", () => {
  it("dates the results of a task the service answers with as already succeeded (a replay after a kill)", async () => {
    const store = SqliteStore.open(join(tempDir(), "bulkcheck.db"));
    const row = await store.tasks.add({
      scope: SCOPE,
      product: "number_activity_batch",
      idempotencyKey: "k",
      count: 500,
      submittedAt: "2025-01-15T08:00:00.000Z",
    });
    const task: Task = {
      ...(FULL_TASK as Task),
      product: "number_activity_batch",
      country: "GB",
      status: "success",
      total: 500,
      submitted_lines: 500,
      created_at: "2025-01-15T08:00:01.000Z",
    };
    const now = Date.parse("2025-01-15T09:00:00.000Z");
    await uploadPart(
      {
        client: { submitTask: () => Promise.resolve({ task, replayed: true }) },
        store,
        product: "number_activity_batch",
        country: "GB",
        now: () => now,
      },
      { path: "/dev/null", count: 500, bytes: 0, sha256: "", index: 0, of: 1, idempotencyKey: "k", ref: row.ref },
    );
    const [stored] = await store.tasks.recent(SCOPE, 1);
    expect(stored).toMatchObject({ taskId: task.id, status: "success", checkedAt: "2025-01-15T09:00:00.000Z" });
    await store.close();
  });
});

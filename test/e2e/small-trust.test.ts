import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import { FULL_TASK, sendEnvelope, startServer, type ScriptedServer } from "../api/scripted-server.js";
import { runCli, tempDir } from "../helpers/cli.js";
import { API_KEY, assertClean, listText, submitArgs } from "../helpers/sandbox.js";

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe("smaller breaks of trust (issue 12, problem 10)", () => {
  it("refuses a task id from the service that is not 1 to 128 letters, digits, _ or - (exit 1), printing and storing nothing of it", async () => {
    const malformed = "3f2a\u001b[2J;rm -rf ~";
    const server = await startServer((req, res) => {
      const data = req.url === "/api/v1/balance" ? { balance_micros: 10_000_000 } : { ...FULL_TASK, id: malformed };
      sendEnvelope(req, res, { code: 0, data });
    });
    servers.push(server);
    const configDir = tempDir();
    const env = { BULKCHECK_BASE_URL: server.origin, BULKCHECK_API_KEY: API_KEY, BULKCHECK_CONFIG_DIR: configDir };
    const dir = tempDir();
    const list = join(dir, "list.txt");
    writeFileSync(list, listText(500));
    for (const argv of [submitArgs(list, "--yes"), ["status", FULL_TASK.id]]) {
      const out = await runCli(argv, { env, cwd: dir });
      assertClean(argv, out, { colour: false, env });
      expect(out.code, argv[0]).toBe(1);
      expect(out.stdout).toBe("");
      expect(out.stderr).toContain("the service returned a malformed task id");
      expect(out.stderr).not.toContain("\u001b");
      expect(out.stderr).not.toContain("Next:");
    }
    // The part's row, with its key, was written before the upload; the service's answer was not.
    expect(readFileSync(join(configDir, "bulkcheck.db")).includes("rm -rf")).toBe(false);
    const store = SqliteStore.open(join(configDir, "bulkcheck.db"));
    const [run] = await store.runs.list({});
    const tasks = await store.tasks.ofRun(run!.id);
    await store.close();
    expect(tasks.map((task) => [Boolean(task.idempotencyKey), task.taskId])).toEqual([[true, undefined]]);
  });
});

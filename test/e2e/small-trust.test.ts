import { readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FULL_TASK, sendEnvelope, startServer, type ScriptedServer } from "../api/scripted-server.js";
import { runCli, tempDir } from "../helpers/cli.js";
import { API_KEY, assertClean, e2eSandboxes, lines, listText, submitArgs } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();
const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe("smaller breaks of trust (issue 12, problem 10)", () => {
  it("keeps the next entry when the journal's last line lost its end (a crash mid-write)", async () => {
    const e = await sandbox();
    const first = await e.run(submitArgs(e.file("first.txt", listText(500)), "--yes", "--quiet"));
    expect(first.code).toBe(0);
    const journal = join(e.configDir, "journal.jsonl");
    // The last entry was cut short, newline and all.
    truncateSync(journal, statSync(journal).size - 20);
    const second = await e.run(submitArgs(e.file("second.txt", listText(500, 5000)), "--yes", "--quiet"));
    expect(second.code).toBe(0);

    const out = await e.run(["status"]);
    expect(out.code).toBe(0);
    const [, ...rows] = lines(out.stdout);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(new RegExp(`^${second.stdout.trim()}\t`));
    expect(out.stderr).toContain("skipping corrupt journal line 2");
    expect(lines(readFileSync(journal, "utf8"))).toHaveLength(4);
  });

  it("refuses a task id from the service that is not 1 to 128 letters, digits, _ or - (exit 1), printing and journalling nothing of it", async () => {
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
    const entries = readFileSync(join(configDir, "journal.jsonl"), "utf8");
    expect(entries).not.toContain("rm -rf");
    expect(journalEntriesOf(entries).map((entry) => entry.type)).toEqual(["submit"]);
  });
});

function journalEntriesOf(text: string): Array<{ type: string }> {
  return lines(text).map((line) => JSON.parse(line) as { type: string });
}

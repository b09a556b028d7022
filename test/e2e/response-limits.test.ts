import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startServer, type ScriptedServer } from "../api/scripted-server.js";
import { allowSmallTasks, oneTaskService } from "../helpers/results-fixtures.js";
import { e2eSandboxes, listText, submitAs, WAITING } from "../helpers/sandbox.js";

/**
 * Issue 18: every response body the client reads has a size limit. An envelope is
 * refused past 1 MiB with a clear message and never read whole; result files are
 * bounded too (see test/results/write-results.test.ts for the cap on a CSV result).
 * Issue 35, point 7: a task's result by what its numbers' rows can hold.
 */
const sandbox = e2eSandboxes();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const MiB = 1024 * 1024;

async function serve(handler: Parameters<typeof startServer>[0]): Promise<ScriptedServer> {
  const server = await startServer(handler);
  closers.push(() => server.close());
  return server;
}

describe("the size of what the service answers", () => {
  it("refuses an endless envelope once it passes 1 MiB, and stops reading it", async () => {
    let sent = 0;
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"code":0,"msg":"success","data":{"balance_micros":1,"pad":"');
      const chunk = "x".repeat(64 * 1024);
      const pump = (): void => {
        while (!res.destroyed && sent < 256 * MiB) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end('"}}');
      };
      pump();
    });
    const e = await sandbox();
    const out = await e.bin(["balance"], { env: { BULKCHECK_BASE_URL: server.origin } });
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr).toContain(
      "The server answered HTTP 200 with application/json too large to be an envelope: over 1 MiB, more than any answer of the service, so bulkcheck stopped reading it",
    );
    expect(out.stderr).toContain("Check that --base-url points at the bulk-checking service");
    expect(sent).toBeLessThan(64 * MiB);
  });

  it("refuses an envelope whose Content-Length is over 1 MiB without waiting for its body", async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json", "content-length": String(50 * MiB) });
      res.write('{"code":0,');
      // …and nothing more: the body would take until the request timeout to fail.
    });
    const e = await sandbox();
    const out = await e.bin(["balance", "--request-timeout", "60"], { env: { BULKCHECK_BASE_URL: server.origin } });
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr).toContain("too large to be an envelope: over 1 MiB");
    expect(out.stderr).not.toContain("did not arrive");
  });

  it("refuses a result link answering with JSON past 1 MiB instead of writing it cut short", async () => {
    const rows = Array.from({ length: 80_000 }, (_, i) => `${447_400_000_000 + i},true\n`).join("");
    const service = await oneTaskService({
      body: `identifier,activated\n${rows}`,
      contentType: "application/json",
      task: { total: 80_000, success_cnt: 80_000 },
    });
    closers.push(service.close);
    const e = await sandbox();
    const out = await e.bin(["download", service.id, "-o", "out.csv"], { env: { BULKCHECK_BASE_URL: service.url } });
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr).toMatch(/answered with application\/json too large to be an envelope \(over 1 MiB\); a result file is CSV or zip/);
    expect(existsSync(join(e.dir, "out.csv"))).toBe(false);
  });
});

describe("a result body that never ends", () => {
  it("stops at what the task's 3 numbers can hold, staged by submit --wait or downloaded, and leaves nothing behind", async () => {
    const e = await sandbox({ fakeClock: false, minTaskSize: 1 });
    await allowSmallTasks(e);
    // The result file, then blank lines (which a reader skips) until the client hangs up.
    e.sandbox.scriptFaults([{ route: "result", fault: "endless-download", times: 2 }]);
    const list = e.file("list.txt", listText(3));
    // --timeout only so that a bulkcheck without the bound fails here rather than after gigabytes.
    const submitted = await e.bin([...submitAs(list, "number_activity_batch", "GB", ...WAITING), "-o", "out.csv", "--timeout", "20"]);
    const bound = "larger than 139472 bytes, more than a result of 3 number\\(s\\) can hold\\.\\nNothing was written\\.";
    expect(submitted.code, submitted.stderr).toBe(3);
    expect(submitted.stderr).toMatch(new RegExp(`The result of task [0-9a-f]{32} is ${bound}`));
    const staged = join(e.configDir, "staging");
    expect(existsSync(staged) ? readdirSync(staged, { recursive: true }).filter((name) => String(name).includes(".result")) : []).toEqual(
      [],
    );
    expect(existsSync(join(e.dir, "out.csv"))).toBe(false);

    const [task] = e.state().tasks;
    const downloaded = await e.bin(["download", task!.id, "-o", "d.csv", "--timeout", "20"]);
    expect(downloaded.code, downloaded.stderr).toBe(3);
    expect(downloaded.stderr).toMatch(new RegExp(`The result of task ${task!.id} is ${bound}`));
    expect(existsSync(join(e.dir, "d.csv"))).toBe(false);
    expect(e.state().scripted_faults_pending).toBe(0);
  });
});

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { API_KEY, e2eSandboxes, gbList, identifier, lines, listText, submitArgs, type E2e } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();

/** Submits `count` numbers starting at `offset` and waits until the task succeeded; returns its id. */
async function finished(e: E2e, count = 500, offset = 0): Promise<string> {
  const out = await e.run(submitArgs(e.file(`list-${offset}.txt`, listText(count, offset)), "--quiet"));
  expect(out.code).toBe(0);
  const id = out.stdout.trim();
  expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
  return id;
}

function expectedIdentifiers(count: number, offset = 0): string[] {
  return gbList(count, offset).map(identifier);
}

describe("bulkcheck download", () => {
  it("writes the result with the spec's header to -o FILE and the summary to stderr", async () => {
    const e = await sandbox();
    const id = await finished(e);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain(`Wrote 500 rows to ${join(e.dir, "results.csv")} (csv).`);
    expect(out.stderr).toContain("Checked 500, no result 0. Charged $0.50;");
    const csv = lines(readFileSync(join(e.dir, "results.csv"), "utf8"));
    expect(csv[0]).toBe("identifier,activated");
    expect(csv.slice(1).map((row) => row.split(",")[0])).toEqual(expectedIdentifiers(500));
    expect(readdirSync(e.dir).filter((name) => name.includes(".tmp"))).toEqual([]);
  });

  it("prints a JSON summary on stdout with --json -o FILE", async () => {
    const e = await sandbox();
    const id = await finished(e);
    const out = await e.run(["download", id, "-o", "results.csv", "--json"]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({
      rows_written: 500,
      path: join(e.dir, "results.csv"),
      format: "csv",
      checked: 500,
      no_result: 0,
    });
  });

  it("streams the result to stdout by default and with -o -", async () => {
    const e = await sandbox();
    const id = await finished(e);
    for (const argv of [
      ["download", id],
      ["download", id, "-o", "-"],
    ]) {
      const out = await e.run(argv);
      expect(out.code).toBe(0);
      const csv = lines(out.stdout);
      expect(csv[0]).toBe("identifier,activated");
      expect(csv).toHaveLength(501);
      expect(out.stderr).toContain("Wrote 500 rows (csv).");
    }
  });

  it("refuses to overwrite an existing file without --force (exit 2), and replaces it with --force", async () => {
    const e = await sandbox();
    const id = await finished(e);
    e.file("results.csv", "precious\n");
    const refused = await e.run(["download", id, "-o", "results.csv"]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("results.csv");
    expect(refused.stderr).toContain("--force");
    expect(readFileSync(join(e.dir, "results.csv"), "utf8")).toBe("precious\n");
    const forced = await e.run(["download", id, "-o", "results.csv", "--force"]);
    expect(forced.code).toBe(0);
    expect(lines(readFileSync(join(e.dir, "results.csv"), "utf8"))).toHaveLength(501);
  });

  it("refuses, before any request, an -o FILE that exists or whose directory does not (exit 2)", async () => {
    const e = await sandbox();
    e.file("results.csv", "precious\n");
    const id = "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53";
    const exists = await e.run(["download", id, "-o", "results.csv"]);
    expect(exists.code).toBe(2);
    expect(exists.stderr).toContain("error: results.csv already exists.");
    const noDir = await e.run(["download", id, "-o", "missing/results.csv"]);
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toContain(`error: Cannot write missing/results.csv: the directory ${join(e.dir, "missing")} does not exist.`);
    const submitNoDir = await e.run(submitArgs(e.file("list.txt", listText(500)), "--wait", "-o", "missing/results.csv"));
    expect(submitNoDir.code).toBe(2);
    expect(e.state().stats.requests).toBe(0);
  });

  it("merges several tasks into one output with one header row", async () => {
    const e = await sandbox();
    const a = await finished(e, 500, 0);
    const b = await finished(e, 600, 5000);
    const out = await e.run(["download", a, b, "-o", "merged.csv"]);
    expect(out.code).toBe(0);
    const csv = lines(readFileSync(join(e.dir, "merged.csv"), "utf8"));
    expect(csv.filter((row) => row === "identifier,activated")).toHaveLength(1);
    expect(csv.slice(1).map((row) => row.split(",")[0])).toEqual([...expectedIdentifiers(500, 0), ...expectedIdentifiers(600, 5000)]);
  });

  it("reads the ids from stdin with -", async () => {
    const e = await sandbox();
    const a = await finished(e, 500, 0);
    const b = await finished(e, 500, 5000);
    const out = await e.run(["download", "-"], { stdin: `${a}\n${b}\n` });
    expect(out.code).toBe(0);
    expect(lines(out.stdout)).toHaveLength(1001);
  });

  it("unzips a result delivered as a zip", async () => {
    const e = await sandbox({ resultFormat: "zip" });
    const id = await finished(e);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(0);
    const csv = lines(readFileSync(join(e.dir, "results.csv"), "utf8"));
    expect(csv[0]).toBe("identifier,activated");
    expect(csv.slice(1).map((row) => row.split(",")[0])).toEqual(expectedIdentifiers(500));
  });

  it("checks again with backoff when result_url is absent on the first check", async () => {
    const e = await sandbox({ resultDelaySeconds: 3 });
    const submitted = await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"));
    const id = submitted.stdout.trim();
    const waited = await e.run(["wait", id, "--interval", "0.2", "--json"]);
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: "success", result_ready: false });
    const checksBefore = e.state().stats.by_route.check ?? 0;
    const before = e.clock.ms;
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(0);
    expect(lines(readFileSync(join(e.dir, "results.csv"), "utf8"))).toHaveLength(501);
    expect((e.state().stats.by_route.check ?? 0) - checksBefore).toBeGreaterThan(2);
    expect(e.clock.ms - before).toBeGreaterThanOrEqual(1000);
    // Each wait is said as it starts (issue 12: say what is happening).
    expect(out.stderr).toContain(`The result file of task ${id} is not published yet; checking again in 1 s.`);
  });

  it("exits 8 with a hint when the result file is never published", async () => {
    const e = await sandbox({ resultDelaySeconds: 3600 });
    const submitted = await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"));
    const id = submitted.stdout.trim();
    await e.run(["wait", id, "--interval", "0.2", "--quiet"]);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(8);
    expect(out.stderr).toContain("has not published its result file yet");
    expect(out.stderr).toContain(`bulkcheck download ${id}`);
    expect(existsSync(join(e.dir, "results.csv"))).toBe(false);
  });

  it("refuses to download a task that is still processing (exit 8) or failed (exit 6)", async () => {
    const slow = await sandbox({ numbersPerSecond: 1 });
    const pending = (await slow.run(submitArgs(slow.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    const processing = await slow.run(["download", pending, "-o", "results.csv"]);
    expect(processing.code).toBe(8);
    expect(processing.stderr).toContain(`Wait for it first: bulkcheck wait ${pending}`);
    expect(existsSync(join(slow.dir, "results.csv"))).toBe(false);

    const failing = await sandbox({ failRate: 1 });
    const id = (await failing.run(submitArgs(failing.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    await failing.run(["wait", id, "--interval", "0.2", "--quiet"]);
    const failed = await failing.run(["download", id]);
    expect(failed.code).toBe(6);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toContain("failed, so it has no result");
  });

  it("gets a fresh link when the result_url expired before the download started", async () => {
    // Real clock: the link lives about a second, and the first download request is held for 2.1 s.
    const e = await sandbox({ fakeClock: false, urlTtlSeconds: 0.001 });
    const id = await finished(e);
    e.sandbox.scriptFaults([{ route: "result", fault: "slow", delayMs: 2100 }]);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(0);
    expect(lines(readFileSync(join(e.dir, "results.csv"), "utf8"))).toHaveLength(501);
    expect(e.state().stats.by_route.result).toBe(2);
  });

  it("restarts a download that broke off midway and writes the complete file", async () => {
    const e = await sandbox();
    const id = await finished(e);
    e.sandbox.scriptFaults([{ route: "result", fault: "drop-mid-download" }]);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("The download broke off");
    expect(out.stderr).toContain("starting again with a fresh link");
    const csv = lines(readFileSync(join(e.dir, "results.csv"), "utf8"));
    expect(csv).toHaveLength(501);
    expect(csv.slice(1).map((row) => row.split(",")[0])).toEqual(expectedIdentifiers(500));
    expect(e.state().stats.faults_injected["drop-mid-download"]).toBe(1);
    expect(readdirSync(e.dir).filter((name) => name.includes(".tmp"))).toEqual([]);
  });

  it("leaves no file and exits 7 when every attempt breaks off", async () => {
    const e = await sandbox();
    const id = await finished(e);
    e.sandbox.scriptFaults([{ route: "result", fault: "drop-mid-download", times: 10 }]);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(7);
    expect(out.stderr).toContain("error: The download broke off 3 times");
    expect(out.stderr).toContain("run the same command again");
    expect(readdirSync(e.dir).filter((name) => name.startsWith("results.csv") || name.startsWith(".results.csv"))).toEqual([]);
  });

  it("writes jsonl, json and tsv that parse back to the same rows", async () => {
    const e = await sandbox();
    const id = await finished(e);
    const csv = lines((await e.run(["download", id])).stdout)
      .slice(1)
      .map((row) => row.split(","));
    const expected = csv.map(([number, activated]) => ({ identifier: number, activated: activated === "true" }));

    const jsonl = await e.run(["download", id, "--format", "jsonl"]);
    expect(jsonl.code).toBe(0);
    expect(lines(jsonl.stdout).map((line) => JSON.parse(line) as unknown)).toEqual(expected);

    const json = await e.run(["download", id, "--format", "json", "-o", "results.json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(readFileSync(join(e.dir, "results.json"), "utf8"))).toEqual(expected);

    const tsv = await e.run(["download", id, "--format", "tsv"]);
    expect(tsv.code).toBe(0);
    const rows = lines(tsv.stdout).map((line) => line.split("\t"));
    expect(rows[0]).toEqual(["identifier", "activated"]);
    expect(rows.slice(1)).toEqual(csv);
  });

  it("refuses an unknown --format with exit 2", async () => {
    const e = await sandbox();
    const out = await e.run(["download", "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53", "--format", "xml"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("xml");
  });

  it("downloads the carrier product with its seven spec columns", async () => {
    const e = await sandbox();
    const submitted = await e.run([
      "submit",
      e.file("list.txt", listText(500)),
      "--type",
      "carrier_batch",
      "--country",
      "GB",
      "--yes",
      "--quiet",
    ]);
    const id = submitted.stdout.trim();
    await e.run(["wait", id, "--interval", "0.2", "--quiet"]);
    const out = await e.run(["download", id]);
    expect(out.code).toBe(0);
    const csv = lines(out.stdout);
    expect(csv[0]).toBe("identifier,carrier,underlying_carrier,number_type,country_code,region,city");
    expect(csv).toHaveLength(501);
  });

  it("never sends the API key to a separate result host", async () => {
    const e = await sandbox({ separateResultOrigin: true });
    const id = await finished(e);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code).toBe(0);
    expect(e.state().stats.api_key_sent_to_result_host).toBe(0);
    expect(e.state().stats.by_route.result).toBe(1);
  });

  it("adds the spec's header when the result file has none", async () => {
    // The sandbox always writes a header; this service does not (what a real server may do).
    const service = await headerlessService();
    try {
      const e = await sandbox();
      const out = await e.run(["download", service.id, "-o", "results.csv"], { env: { BULKCHECK_BASE_URL: service.url } });
      expect(out.code).toBe(0);
      expect(readFileSync(join(e.dir, "results.csv"), "utf8")).toBe("identifier,activated\n447400100000,true\n447500100001,false\n");
      expect(service.resultHeaders.map((headers) => headers["x-api-key"])).toEqual([undefined]);
    } finally {
      await service.close();
    }
  });
});

/** A minimal service: one finished task whose result (on another origin) has no header row. */
async function headerlessService() {
  const id = "ab".repeat(16);
  const resultHeaders: IncomingHttpHeaders[] = [];
  const results = createServer((req, res) => {
    resultHeaders.push(req.headers);
    res.writeHead(200, { "content-type": "text/csv" }).end("447400100000,true\n447500100001,false\n");
  });
  const api = createServer((req, res) => {
    const ok = req.headers["x-api-key"] === API_KEY && req.url === `/api/v1/bulk-tasks/${id}`;
    const { port } = results.address() as AddressInfo;
    const task = {
      id,
      product: "number_validation_batch",
      status: "success",
      country: "GB",
      total: 2,
      success_cnt: 2,
      failure_cnt: 0,
      result_url: `http://127.0.0.1:${port}/files/${id}.csv?sig=abc`,
      created_at: "2025-01-15T09:00:00Z",
    };
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(ok ? { code: 0, msg: "success", data: task } : { code: 40100, msg: "no", data: {} }));
  });
  await Promise.all([api, results].map((server) => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))));
  return {
    id,
    url: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    resultHeaders,
    close: () => Promise.all([api, results].map((server) => new Promise((resolve) => server.close(resolve)))),
  };
}

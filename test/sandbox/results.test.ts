import { resultRow, resultRowInTask } from "../../src/sandbox/result-values.js";
import type { ServiceType } from "../../src/spec/products.js";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Prepared } from "../../src/sandbox/preparation.js";
import { ResultFiles } from "../../src/sandbox/result-files.js";
import { tempDir } from "../helpers/cli.js";
import yauzl from "yauzl";
import { SERVICE_TYPES, resultColumns } from "../../src/spec/products.js";
import { apiGet, download, finish, gbNumbers, state, submit, type Harness, trackedHarnesses } from "./helpers.js";

const harness = trackedHarnesses();

async function finishedTask(h: Harness, serviceType = "number_activity_batch", lines = gbNumbers(500)) {
  const reply = await submit(h, { serviceType, country: "GB", lines });
  return finish(h, reply.body.data.id);
}

function unzipOnly(buffer: Buffer): Promise<{ name: string; content: string }> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      zip.readEntry();
      zip.on("entry", (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError) return reject(streamError);
          const chunks: Buffer[] = [];
          stream.on("data", (chunk: Buffer) => chunks.push(chunk));
          stream.on("end", () => resolve({ name: entry.fileName, content: Buffer.concat(chunks).toString("utf8") }));
        });
      });
    });
  });
}

describe("result files", () => {
  it.each(SERVICE_TYPES)("serves a %s result as CSV with the spec's columns as header row", async (serviceType) => {
    const h = await harness();
    const task = await finishedTask(h, serviceType);
    const file = await download(h, task.result_url!);
    expect(file.status).toBe(200);
    expect(file.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(Number(file.headers["content-length"])).toBe(file.body.length);
    const rows = file.body.toString("utf8").trimEnd().split("\n");
    expect(rows[0]).toBe(resultColumns(serviceType).join(","));
    expect(rows).toHaveLength(501);
    expect(rows[1]!.split(",")[0]).toBe("447410000000");
    if (serviceType === "carrier_batch") expect(rows[1]).toBe("447410000000,Orange,Orange,mobile,GB,,");
    else expect(rows[1]).toMatch(/^447410000000,(true|false)$/);
  });

  it("leaves numbers without a result out of the file: rows equal success_cnt", async () => {
    const h = await harness({ noResultRate: 0.2 });
    const task = await finishedTask(h);
    const rows = (await download(h, task.result_url!)).body.toString("utf8").trimEnd().split("\n");
    expect(task.failure_cnt).toBeGreaterThan(0);
    expect(rows.length - 1).toBe(task.success_cnt);
  });

  it("refuses an expired link with 403 XML, and a fresh check gives a working link", async () => {
    const h = await harness({ urlTtlSeconds: 300 });
    const task = await finishedTask(h);
    h.advance(301);
    const expired = await download(h, task.result_url!);
    expect(expired.status).toBe(403);
    expect(expired.headers["content-type"]).toBe("application/xml");
    expect(expired.body.toString()).toContain("<Code>AccessDenied</Code>");
    const fresh = (await apiGet(h, `/api/v1/bulk-tasks/${task.id}`)).body.data.result_url!;
    expect(fresh).not.toBe(task.result_url);
    expect((await download(h, fresh)).status).toBe(200);
  });

  it("refuses a tampered signature with 403 and an unknown file with 404, both in XML", async () => {
    const h = await harness();
    const task = await finishedTask(h);
    const tampered = task.result_url!.replace(/sig=(.)/, (_, c: string) => `sig=${c === "0" ? "1" : "0"}`);
    const forged = await download(h, tampered);
    expect(forged.status).toBe(403);
    expect(forged.body.toString()).toContain("SignatureDoesNotMatch");
    const unknown = await download(h, task.result_url!.replace(task.id, "f".repeat(32)));
    expect(unknown.status).toBe(404);
    expect(unknown.body.toString()).toContain("<Code>NoSuchKey</Code>");
  });

  it("withholds result_url for resultDelaySeconds after success", async () => {
    const h = await harness({ resultDelaySeconds: 20, numbersPerSecond: 1000 });
    const id = (await submit(h, { serviceType: "carrier_batch", lines: gbNumbers(500) })).body.data.id;
    h.advance(1.525 + 0.5); // preparation 525 ms, processing 500 ms: finished
    const early = (await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data;
    expect(early).toMatchObject({ status: "success", success_cnt: 500 });
    expect(early).not.toHaveProperty("result_url");
    h.advance(20);
    expect((await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data.result_url).toMatch(/\.csv\?/);
  });

  it("serves a .zip holding the same CSV when resultFormat is zip", async () => {
    const zipped = await harness({ resultFormat: "zip" });
    const plain = await harness();
    const zipTask = await finishedTask(zipped);
    const csvTask = await finishedTask(plain);
    expect(zipTask.result_url).toMatch(/\/results\/[0-9a-f]{32}\.zip\?/);
    const file = await download(zipped, zipTask.result_url!);
    expect(file.headers["content-type"]).toBe("application/zip");
    const entry = await unzipOnly(file.body);
    expect(entry.name).toBe(`${zipTask.id}.csv`);
    expect(entry.content).toBe((await download(plain, csvTask.result_url!)).body.toString("utf8"));
  });

  it("produces byte-identical CSV for the same seed (zipped too) and different values for another seed", async () => {
    const csv: string[] = [];
    for (const seed of [42, 42, 43]) {
      for (const resultFormat of ["csv", "zip"] as const) {
        const h = await harness({ seed, resultFormat, noResultRate: 0.1 });
        const task = await finishedTask(h, "number_high_value_batch");
        const body = (await download(h, task.result_url!)).body;
        csv.push(resultFormat === "zip" ? (await unzipOnly(body)).content : body.toString("utf8"));
      }
    }
    expect(new Set(csv.slice(0, 4)).size).toBe(1);
    expect(csv[4]).toBe(csv[5]);
    expect(csv[4]).not.toBe(csv[0]);
  });

  it("serves results from a separate origin when asked, and counts API keys sent there", async () => {
    const h = await harness({ separateResultOrigin: true });
    const task = await finishedTask(h);
    const link = new URL(task.result_url!);
    expect(link.origin).not.toBe(h.sandbox.url);
    expect((await download(h, `${h.sandbox.url}${link.pathname}${link.search}`)).status).toBe(404);
    expect((await download(h, task.result_url!)).status).toBe(200);
    expect((await state(h)).stats.api_key_sent_to_result_host).toBe(0);
    expect((await download(h, task.result_url!, { "x-api-key": h.sandbox.apiKey })).status).toBe(200);
    expect((await state(h)).stats.api_key_sent_to_result_host).toBe(1);
  });

  it("needs no API key for a download on the API origin, and logs the path without the signed query", async () => {
    const h = await harness();
    const task = await finishedTask(h);
    expect((await download(h, task.result_url!)).status).toBe(200);
    await h.close();
    expect(h.logs.at(-1)).toMatch(new RegExp(`^GET /results/${task.id}\\.csv http=200 \\d+ms$`));
    expect(h.logs.join("\n")).not.toMatch(/sig=|expires=/);
  });
});

describe("ResultFiles", () => {
  it("releases a task's numbers once its file is built, and serves that file again without them", async () => {
    const dir = tempDir();
    const files = new ResultFiles(dir, "csv", 1, 0, 0, new AbortController().signal);
    const kept = ["447400100000", "447500100001"];
    const prepared: Prepared = { invalid: 0, noCode: 0, otherCountry: 0, duplicate: 0, keptCount: kept.length, kept, noResult: 0 };
    const source = { id: "a".repeat(32), ordinal: 1, product: "number_activity_batch" as const, createdAtMs: 0, prepared };
    const built = await files.file(source);
    expect(prepared.kept).toBeUndefined();
    expect(prepared.keptCount).toBe(2);
    expect(await files.file(source)).toEqual(built);
    expect(
      readFileSync(built.path, "utf8")
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((row) => row.split(",")[0]),
    ).toEqual(kept);
  });
});

describe("drift", () => {
  const numbers = Array.from({ length: 4000 }, (_, i) => String(447400100000 + i));
  const rows = (product: ServiceType, ordinal: number, drift: number, seed = 1) =>
    numbers.map((identifier) => resultRowInTask(seed, product, identifier, ordinal, drift).join(","));

  it("changes about the drift share of the results between two tasks, the same ones for the same seed", () => {
    const first = rows("number_activity_batch", 1, 0.05);
    const second = rows("number_activity_batch", 2, 0.05);
    const changed = first.filter((row, i) => row !== second[i]).length;
    // Each task draws its own 5%: a number differs when exactly one of the two drew it (~9.5%).
    expect(changed / numbers.length).toBeGreaterThan(0.07);
    expect(changed / numbers.length).toBeLessThan(0.12);
    expect(rows("number_activity_batch", 2, 0.05)).toEqual(second);
    expect(rows("number_activity_batch", 2, 0.05, 2)).not.toEqual(second);
  });

  it("leaves every result as it is without drift, and moves a drifted mobile number to another carrier", () => {
    expect(rows("carrier_batch", 1, 0)).toEqual(rows("carrier_batch", 2, 0));
    const usual = numbers.map((identifier) => resultRow(1, "carrier_batch", identifier));
    const drifted = numbers.map((identifier) => resultRowInTask(1, "carrier_batch", identifier, 3, 1));
    for (const [i, row] of drifted.entries()) {
      expect(row[1]).not.toBe(usual[i]![1]);
      expect(row.slice(3)).toEqual(usual[i]!.slice(3));
    }
  });
});

import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { setFlagsFromString } from "node:v8";
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createClient, type ApiClient } from "../../src/api/index.js";
import { UsageError } from "../../src/errors.js";
import { readMultipart, type Part } from "./multipart-reader.js";
import { API_KEY, FULL_TASK, sendEnvelope, startServer, type ScriptedServer } from "./scripted-server.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bulkcheck-api-submit-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let server: ScriptedServer | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

async function recordingServer(): Promise<{ server: ScriptedServer; client: ApiClient; uploads: Part[][] }> {
  const uploads: Part[][] = [];
  server = await startServer(async (req, res) => {
    uploads.push(await readMultipart(req));
    sendEnvelope(req, res, { code: 0, data: FULL_TASK });
  });
  client = createClient({ baseUrl: server.origin, apiKey: API_KEY });
  return { server, client, uploads };
}

describe("submitTask", () => {
  it("sends service_type, then country, then the file, with the file intact", async () => {
    const content = "+1 415 555 0100\r\n14155550101\n\n14155550102\n";
    const path = join(dir, "list.csv");
    await writeFile(path, content);
    const { server, client, uploads } = await recordingServer();

    const result = await client.submitTask({ serviceType: "number_validation_batch", country: "US", file: path });

    expect(result).toEqual({ task: FULL_TASK, replayed: false });
    expect(server.hits[0]).toMatchObject({ method: "POST", url: "/api/v1/bulk-tasks" });
    expect(server.hits[0]?.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(server.hits[0]?.headers["idempotency-key"]).toBeUndefined();
    expect(uploads[0]).toEqual([
      { kind: "field", name: "service_type", value: "number_validation_batch" },
      { kind: "field", name: "country", value: "US" },
      {
        kind: "file",
        name: "file",
        filename: "list.csv",
        mimeType: "text/csv",
        size: Buffer.byteLength(content),
        sha256: createHash("sha256").update(content).digest("hex"),
        head: content,
      },
    ]);
  });

  it("leaves country out when it is absent and uses the given file name", async () => {
    const path = join(dir, "carrier-upload.tmp");
    await writeFile(path, "447700900123\n");
    const { client, uploads } = await recordingServer();

    await client.submitTask({ serviceType: "carrier_batch", file: path, fileName: "carriers.txt" });

    expect(uploads[0]?.map((p) => p.name)).toEqual(["service_type", "file"]);
    expect(uploads[0]?.[1]).toMatchObject({ filename: "carriers.txt", mimeType: "text/plain", head: "447700900123\n" });
  });

  it("fails with a usage error naming the path when the file cannot be read", async () => {
    const { server, client } = await recordingServer();
    const missing = join(dir, "missing.txt");
    const error = await client.submitTask({ serviceType: "carrier_batch", file: missing }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(missing);
    expect(server.hits).toHaveLength(0);
  });

  /*
   * Streaming check: a 50 MB upload must not pass through the client's memory in one
   * piece. The server runs in a process of its own (test/api/upload-server.mjs), so this
   * process holds only the client; with V8's gc exposed at run time, it samples its
   * heap + ArrayBuffer totals every 20 ms of the upload.
   */
  it("streams a 50 MB file without holding it in memory", async () => {
    const size = 50 * 1024 * 1024;
    const path = join(dir, "big.txt");
    const expectedHash = await writeNumbers(path, size);

    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const retained = (): number => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };

    const uploadServer = fork(fileURLToPath(new URL("./upload-server.mjs", import.meta.url)));
    try {
      const message = () => once(uploadServer, "message").then(([value]) => value as { port?: number; size?: number; sha256?: string });
      const listening = message();
      uploadServer.send({ task: FULL_TASK });
      const { port } = await listening;
      client = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY });
      const baseline = retained();
      const samples: number[] = [];
      const sampler = setInterval(() => samples.push(retained() - baseline), 20);
      const received = message();
      try {
        await client.submitTask({ serviceType: "number_validation_batch", country: "US", file: path, idempotencyKey: "big-1" });
      } finally {
        clearInterval(sampler);
      }
      expect(await received).toEqual({ size, sha256: expectedHash });
      expect(samples.length).toBeGreaterThanOrEqual(3);
      // Read whole, the file is held through the upload (158 MB measured); read ahead
      // of the socket, it piles up over it. Streamed, a few chunks are in flight, and a
      // starved receiver leaves a brief spike (14 MB seen under the full suite's load).
      const sorted = [...samples].sort((a, b) => a - b);
      expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(size / 5);
      expect(sorted[sorted.length - 1]).toBeLessThan(size / 2);
    } finally {
      uploadServer.kill();
    }
  });
});

/** Writes `size` bytes of phone-number lines in 1 MB blocks; returns their SHA-256. */
async function writeNumbers(path: string, size: number): Promise<string> {
  const line = "14155550100\n";
  const block = line.repeat(Math.ceil((1024 * 1024) / line.length)).slice(0, 1024 * 1024);
  const hash = createHash("sha256");
  const out = createWriteStream(path);
  for (let written = 0; written < size; written += block.length) {
    hash.update(block);
    if (!out.write(block)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  return hash.digest("hex");
}

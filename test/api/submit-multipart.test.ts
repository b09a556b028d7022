import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
});

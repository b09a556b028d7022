import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { Journal } from "../../src/journal/journal.js";
import type { Task } from "../../src/spec/task.js";
import { Staging } from "../../src/tasks/staging.js";
import type { UploadResult } from "../../src/tasks/submit.js";
import { tempDir } from "../helpers/cli.js";

const RESULT = "identifier,activated\n447400100000,true\n";

function finished(index: number, id: string): UploadResult {
  const task: Task = { id, product: "carrier_batch", status: "success", country: "GB", total: 1, created_at: "" };
  return {
    upload: { index, of: 2, idempotencyKey: `key-${index}`, path: "", count: 1, bytes: 1, sha256: "" },
    task,
    replayed: false,
  };
}

const body = (content: string) => async () => Readable.from([Buffer.from(content)]);
const never = async (): Promise<Readable> => {
  throw new Error("downloaded again");
};

async function setup() {
  const state = tempDir();
  const journal = new Journal(state);
  const root = join(state, "staging");
  const open = (keys = ["key-0", "key-1"]) => Staging.open(root, keys, journal, () => Date.UTC(2025, 0, 15));
  return { journal, root, open };
}

/** The file the journal records for a task, as a path. */
async function stagedPath(journal: Journal, dir: string, taskId: string): Promise<string> {
  const entry = (await journal.stagedResults()).get(taskId);
  if (!entry) throw new Error(`nothing staged for ${taskId}`);
  return join(dir, entry.file);
}

describe("Staging", () => {
  it("keeps a result whole in a private directory, records its size and hash, and reads it back", async () => {
    const { journal, root, open } = await setup();
    const staging = await open();
    expect(await staging.stage(finished(0, "t0"), body(RESULT))).toBe("fetched");
    const entries = [...(await journal.stagedResults()).values()];
    expect(entries).toEqual([
      {
        type: "staged",
        at: "2025-01-15T00:00:00.000Z",
        idempotency_key: "key-0",
        task_id: "t0",
        file: expect.stringMatching(/^\d+-[0-9a-f]+\/part-1\.result$/) as unknown,
        bytes: RESULT.length,
        sha256: createHash("sha256").update(RESULT).digest("hex"),
      },
    ]);
    const file = join(staging.dir, entries[0]!.file);
    for (const dir of [root, staging.dir, dirname(file)]) expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dirname(file))).toEqual(["part-1.result"]);
    expect(await text(await staging.read(finished(0, "t0").task))).toBe(RESULT);
  });

  it("gives a re-run of the same list the same directory, and reuses a staged result that still checks out", async () => {
    const { open } = await setup();
    const first = await open();
    await first.stage(finished(0, "t0"), body(RESULT));
    const rerun = await open();
    expect(rerun.dir).toBe(first.dir);
    expect(await rerun.stage(finished(0, "t0"), never)).toBe("reused");
    expect(await text(await rerun.read(finished(0, "t0").task))).toBe(RESULT);
    expect((await open(["key-0", "other"])).dir).not.toBe(first.dir);
  });

  it("fetches again a staged result whose bytes changed, or that belongs to another task", async () => {
    const { journal, open } = await setup();
    const first = await open();
    await first.stage(finished(0, "t0"), body(RESULT));
    writeFileSync(await stagedPath(journal, first.dir, "t0"), RESULT.replace("true", "fals"));
    const rerun = await open();
    expect(await rerun.stage(finished(0, "t0"), body(RESULT))).toBe("fetched");
    expect(await text(await rerun.read(finished(0, "t0").task))).toBe(RESULT);
    expect(await (await open()).stage(finished(0, "t9"), body(RESULT))).toBe("fetched");
  });

  it("leaves nothing staged or recorded when the transfer breaks", async () => {
    const { journal, open } = await setup();
    const staging = await open();
    const broken = async () =>
      Readable.from(
        (async function* () {
          yield Buffer.from("identifier,activated\n");
          throw new Error("connection reset");
        })(),
      );
    await expect(staging.stage(finished(1, "t1"), broken)).rejects.toThrow("connection reset");
    const [own] = readdirSync(staging.dir);
    expect(readdirSync(join(staging.dir, own!))).toEqual([]);
    expect((await journal.stagedResults()).size).toBe(0);
  });

  it("lets two runs of the same list at once each keep what it reads, and removes the directory when the last is done", async () => {
    const { open } = await setup();
    const first = await open();
    const second = await open();
    await first.stage(finished(0, "t0"), body(RESULT));
    expect(await second.stage(finished(0, "t0"), never)).toBe("reused");
    await first.remove();
    expect(await text(await second.read(finished(0, "t0").task))).toBe(RESULT);
    // What a process that is no longer running left goes too; a running one's stays until it is done.
    mkdirSync(join(second.dir, "999999999-dead"));
    await second.remove();
    expect(existsSync(second.dir)).toBe(false);
  });

  it("keeps the directory of another run still going", async () => {
    const { open } = await setup();
    const staging = await open();
    const running = join(staging.dir, `${process.pid}-beef`);
    mkdirSync(running);
    await staging.remove();
    expect(readdirSync(staging.dir)).toEqual([`${process.pid}-beef`]);
  });
});

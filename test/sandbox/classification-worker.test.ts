import type { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it, vi } from "vitest";
import { prepareAllLines, type prepareLines, type PreparationInput } from "../../src/sandbox/preparation.js";
import { gbList } from "../helpers/sandbox.js";

/**
 * A big upload is classified by a worker thread of the built sandbox (dist/, as `bulkcheck
 * sandbox` runs it), so its event loop answers meanwhile: the worker's counts are the ones
 * the sandbox finds on its own thread, and closing the sandbox stops a classification under way.
 */
const compiled = new URL("../../dist/sandbox/preparation.js", import.meta.url).href;
const built = (await import(compiled)) as { prepareLines: typeof prepareLines };

/** Each worker thread started meanwhile, with its exit code once it exits. */
const workers: Array<{ exitCode: Promise<number> }> = [];
const onWorker = (worker: Worker) => workers.push({ exitCode: new Promise((resolve) => worker.once("exit", resolve)) });
process.on("worker", onWorker);
afterEach(() => void workers.splice(0));

/** 24,000 lines: 20,000 distinct GB mobiles, then 1,000 each of duplicates, invalid, no_code (national) and other_country lines. */
function mixedLines(): string[] {
  const valid = gbList(20_000);
  return [
    ...valid,
    ...valid.slice(0, 1000),
    ...Array.from({ length: 1000 }, (_, i) => `12${i}`),
    ...Array.from({ length: 1000 }, (_, i) => `07400 ${String(200_000 + i)}`),
    ...Array.from({ length: 1000 }, (_, i) => `+1 202 555 ${String(1000 + i).padStart(4, "0")}`),
  ];
}

const input = (lines: string[]): PreparationInput => ({
  lines,
  country: "GB",
  product: "number_validation_batch",
  seed: 7,
  noResultRate: 0.05,
});

describe("the sandbox's classification of a big upload", () => {
  it("runs in a worker thread and finds what the sandbox's own thread finds", async () => {
    const lines = mixedLines();
    const inWorker = await built.prepareLines(input(lines), new AbortController().signal);
    expect(workers).toHaveLength(1);
    expect(inWorker).toEqual(prepareAllLines(input(lines)));
    expect(inWorker).toMatchObject({ keptCount: 20_000, duplicate: 1000, invalid: 1000, noCode: 1000, otherCountry: 1000 });
    expect(inWorker.noResult).toBeGreaterThan(0);
  });

  it("classifies a small upload on the sandbox's thread, as it always did", async () => {
    const lines = gbList(500);
    expect(await built.prepareLines(input(lines), new AbortController().signal)).toEqual(prepareAllLines(input(lines)));
    expect(workers).toHaveLength(0);
  });

  it("stops a classification under way when the sandbox closes", async () => {
    const closing = new AbortController();
    const classifying = built.prepareLines(input(mixedLines()), closing.signal);
    // Once the worker is classifying (24,000 lines take it about a second).
    await vi.waitFor(() => expect(workers).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 200));
    closing.abort(new DOMException("The sandbox closed.", "AbortError"));
    await expect(classifying).rejects.toThrow("The sandbox closed.");
    // Its worker is stopped, not left classifying to the end (which would exit with 0).
    expect(await workers[0]!.exitCode).toBe(1);
  });
});

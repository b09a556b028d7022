import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { Printer, type LiveLine } from "../../src/cli/printer.js";

/** A printer on buffers, and a live line that records what was done to it (with each write to stderr in between). */
function printerWithLine() {
  const events: string[] = [];
  const stderr = new PassThrough();
  stderr.on("data", (chunk: Buffer) => events.push(`write ${chunk.toString().trim()}`));
  const printer = new Printer(
    { stdin: new PassThrough(), stdout: new PassThrough(), stderr },
    { json: false, quiet: false, verbose: false, colour: false },
  );
  const line: LiveLine = {
    start: () => events.push("start"),
    stop: () => events.push("stop"),
    clear: () => events.push("clear"),
    render: () => events.push("render"),
  };
  return { printer, line, events };
}

describe("a live line and a question", () => {
  it("stops the live line while a question waits, leaves lines printed meanwhile alone, and draws it again once answered", async () => {
    const { printer, line, events } = printerWithLine();
    printer.showLiveLine(line);
    const answer = await printer.asking(async () => {
      printer.note("a note while asking");
      return "y";
    });
    printer.note("after");
    expect(answer).toBe("y");
    expect(events).toEqual(["start", "stop", "write a note while asking", "start", "clear", "write after", "render"]);
  });

  it("draws a live line shown while a question waits only once the question is answered", async () => {
    const { printer, line, events } = printerWithLine();
    let answer!: (text: string) => void;
    const asked = printer.asking(() => new Promise<string>((resolve) => (answer = resolve)));
    const release = printer.showLiveLine(line);
    expect(events).toEqual([]);
    answer("n");
    await asked;
    expect(events).toEqual(["start"]);
    release();
    expect(events).toEqual(["start", "stop"]);
  });

  it("draws the live line again when the question is backed out of", async () => {
    const { printer, line, events } = printerWithLine();
    printer.showLiveLine(line);
    await expect(printer.asking(() => Promise.reject(new Error("Ctrl-C")))).rejects.toThrow("Ctrl-C");
    expect(events).toEqual(["start", "stop", "start"]);
  });
});

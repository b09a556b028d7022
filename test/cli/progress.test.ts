import { describe, expect, it } from "vitest";
import { createPrinter } from "../../src/cli/context.js";
import { createProgress } from "../../src/cli/progress.js";
import { testRuntime } from "../helpers/cli.js";

/** The texts a spinner drew on `stderr`, in order (each frame's text after its braille dot). */
function drawn(stderr: string): string[] {
  // eslint-disable-next-line no-control-regex -- the spinner's own escape codes are what it reads past
  return [...stderr.matchAll(/[\u2800-\u28ff] ([^\u001b\n]*)/gu)].map((match) => match[1]!.trim());
}

describe("progress on a terminal", () => {
  it("draws the last text before it stops, even one that came within the tenth of a second after the one before", async () => {
    const { runtime, stderr } = testRuntime({ tty: true });
    // A clock that stands still: every update after the first comes within the redraw interval.
    const progress = await createProgress(createPrinter(runtime, {}), {}, () => 0);
    progress.update("1 of 2 tasks finished");
    progress.update("2 of 2 tasks finished");
    progress.stop();
    expect(drawn(stderr()).at(-1)).toBe("2 of 2 tasks finished");
  });

  it("draws an update within the tenth of a second only once: a burst of updates is not a burst of redraws", async () => {
    const { runtime, stderr } = testRuntime({ tty: true });
    const progress = await createProgress(createPrinter(runtime, {}), {}, () => 0);
    for (let finished = 1; finished <= 5; finished++) progress.update(`${finished} of 5 tasks finished`);
    progress.stop();
    expect(drawn(stderr()).filter((text) => text !== "")).toEqual(["1 of 5 tasks finished", "5 of 5 tasks finished"]);
  });
});

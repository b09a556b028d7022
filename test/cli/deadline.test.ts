import { describe, expect, it } from "vitest";
import { CommandDeadline } from "../../src/cli/deadline.js";
import { InterruptedError, TimeoutExpiredError } from "../../src/errors.js";

/** A deadline of `seconds` whose time has run out, with `inFlight` requests then; the clock stands still. */
async function ranOut(inFlight: number, seconds = 0.05): Promise<CommandDeadline> {
  const deadline = new CommandDeadline({ signal: new AbortController().signal, now: () => 0 }, seconds);
  deadline.watchRequests(() => inFlight);
  await new Promise((resolve) => deadline.signal.addEventListener("abort", resolve, { once: true }));
  return deadline;
}

describe("what a --timeout that ran out says (issue 35, point 9)", () => {
  it("says requests were stopped only when one was in flight", async () => {
    const busy = (await ranOut(1)).explain(new InterruptedError(), "bulkcheck wait T");
    expect(busy).toBeInstanceOf(TimeoutExpiredError);
    expect((busy as Error).message).toBe("The --timeout of 50 ms ran out; requests in flight were stopped.");
    const idle = (await ranOut(0)).explain(new InterruptedError(), "bulkcheck wait T");
    expect((idle as Error).message).toBe("The --timeout of 50 ms ran out.");
  });

  it("never says that it stopped twice: an interruption's own Stopped. is left out, the rest of it kept", async () => {
    const deadline = await ranOut(1);
    const explained = deadline.explain(
      new InterruptedError("Stopped. The tasks already created are not affected.", { hint: "Resume with: bulkcheck submit x" }),
      "unused",
    ) as TimeoutExpiredError;
    expect(explained.message).toBe(
      "The --timeout of 50 ms ran out; requests in flight were stopped. The tasks already created are not affected.",
    );
    expect(explained.hint).toBe("Resume with: bulkcheck submit x");
  });
});

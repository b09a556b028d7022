import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { e2eSandboxes, listText, promptedSubmitArgs, storedTasks, submitArgs, TASK_ID } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();

describe("idempotency keys bound to the content they were used for (issue 12, problem 2)", () => {
  it("refuses a fixed --idempotency-key an earlier run used, before uploading, naming that run's task", async () => {
    const e = await sandbox();
    const night1 = e.file("night-1.txt", listText(500));
    const first = await e.run(submitArgs(night1, "--idempotency-key", "nightly", "--yes", "--quiet"));
    expect(first.code, first.stderr).toBe(0);
    const taskId = first.stdout.trim();
    expect(taskId).toMatch(TASK_ID);
    const [stored] = await storedTasks(e);
    const at = stored!.submittedAt!;

    const night2 = e.file("night-2.txt", listText(800, 5000));
    const submitsBefore = e.state().stats.by_route.submit;
    const second = await e.run(submitArgs(night2, "--idempotency-key", "nightly", "--yes"));
    expect(second.code).toBe(3);
    expect(second.stdout).toBe("");
    expect(second.stderr).toContain(`The idempotency key "nightly" was used on ${at} (task ${taskId}, run ${stored!.runId}).`);
    expect(second.stderr).toContain("--idempotency-key");
    expect(e.state().stats.by_route.submit).toBe(submitsBefore);
    expect(e.state().tasks).toHaveLength(1);

    // A key names one run's upload: the same list with the same key once its run has finished is a new run (checking
    // again with --max-age 0, or its task in flight would serve it), refused the same way.
    const again = await e.run(submitArgs(night1, "--idempotency-key", "nightly", "--yes", "--quiet", "--max-age", "0"));
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("Give each run its own --idempotency-key");
    expect(e.state().tasks).toHaveLength(1);
  });

  it("is refused by the service too (42200, exit 3) when the store that knew the key is elsewhere", async () => {
    const e = await sandbox();
    const first = await e.run(submitArgs(e.file("night-1.txt", listText(500)), "--idempotency-key", "nightly", "--yes", "--quiet"));
    expect(first.code).toBe(0);
    const otherMachine = { BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-other-machine-") };
    const second = await e.run(submitArgs(e.file("night-2.txt", listText(800, 5000)), "--idempotency-key", "nightly", "--yes"), {
      env: otherMachine,
    });
    expect(second.code).toBe(3);
    expect(second.stderr).toContain('The service already holds the idempotency key "nightly" for a different file');
    expect(second.stderr).toContain("Idempotency-Key reused with a different request");
    expect(e.state().tasks).toHaveLength(1);
    expect(e.state().ledger.filter((entry) => entry.kind === "reserve")).toHaveLength(1);
  });
});

describe("runs are found per service and profile (issue 12, problem 7)", () => {
  it("checks the balance and asks again on production for a list first tried on the sandbox", async () => {
    const trial = await sandbox();
    const production = await sandbox();
    const list = trial.file("list.txt", listText(500));
    const tried = await trial.run(submitArgs(list, "--yes", "--quiet"));
    expect(tried.code).toBe(0);

    const onProduction = await trial.run(promptedSubmitArgs(list), {
      env: { BULKCHECK_BASE_URL: production.sandbox.url },
      tty: true,
      stdin: "n\n",
    });
    expect(onProduction.stderr).toContain("Reserve $0.50 of $10.00? [y/N]");
    expect(onProduction.code).toBe(130);
    expect(production.state().stats.by_route.balance).toBe(1);
    expect(production.state().tasks).toEqual([]);
  });
});

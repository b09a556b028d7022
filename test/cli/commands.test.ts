import { describe, expect, it } from "vitest";
import { CommanderError, InvalidArgumentError, type CommandUnknownOpts, type Option } from "../../src/cli/commander.js";
import { balanceCommand } from "../../src/cli/commands/balance.js";
import { configCommand, type ConfigRuns } from "../../src/cli/commands/config.js";
import { demoCommand } from "../../src/cli/commands/demo.js";
import { downloadCommand } from "../../src/cli/commands/download.js";
import { reportCommand } from "../../src/cli/commands/report.js";
import { retryFailedCommand } from "../../src/cli/commands/retry-failed.js";
import { sandboxCommand } from "../../src/cli/commands/sandbox.js";
import { statusAction } from "../../src/cli/actions/status.js";
import { statusCommand } from "../../src/cli/commands/status.js";
import { submitCommand } from "../../src/cli/commands/submit.js";
import { validateCommand } from "../../src/cli/commands/validate.js";
import { waitAction } from "../../src/cli/actions/wait.js";
import { waitCommand } from "../../src/cli/commands/wait.js";
import type { Context, Invoke } from "../../src/cli/context.js";
import { createContext } from "../../src/cli/services.js";
import { buildProgram } from "../../src/cli/program.js";
import { main } from "../../src/main.js";
import { testRuntime } from "../helpers/cli.js";
import { allowSmallTasks } from "../helpers/results-fixtures.js";
import { e2eSandboxes, lines, listText, submitArgs } from "../helpers/sandbox.js";

/** Runs the action the way main does: with a Context built for this run. */
const invoke: Invoke = async (_cmd, run) => run(await createContext(testRuntime().runtime, {}));

/** Parses `argv` with the command's own definition; returns what its action handed the run (after the Context). */
async function parsed<A extends unknown[]>(
  define: (invoke: Invoke, run: (ctx: Context, ...args: A) => Promise<void>) => CommandUnknownOpts,
  argv: string[],
): Promise<A | undefined> {
  let seen: A | undefined;
  const command = define(invoke, async (_ctx, ...args) => {
    seen = args;
  });
  await command
    .exitOverride()
    .configureOutput({ writeErr: () => {} })
    .parseAsync(argv, { from: "user" });
  return seen;
}

/** The code of commander's refusal of `argv`. */
async function refusal(define: (invoke: Invoke) => CommandUnknownOpts, argv: string[]): Promise<string | undefined> {
  const command = define(invoke)
    .exitOverride()
    .configureOutput({ writeErr: () => {} });
  const error: unknown = await command.parseAsync(argv, { from: "user" }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return error instanceof CommanderError ? error.code : undefined;
}

describe("each command's flags, parsed into the options its run gets", () => {
  it("submit", async () => {
    const argv = [
      "crm.csv",
      "--type",
      "carrier_batch",
      "--column",
      "phone",
      "--threads",
      "0",
      "--max-cost",
      "$2.50",
      "--wait",
      "--interval",
      "1.5",
      "-o",
      "-",
      "--format",
      "jsonl",
      "-y",
    ];
    expect(await parsed(submitCommand, argv)).toEqual([
      "crm.csv",
      {
        type: "carrier_batch",
        column: "phone",
        threads: 0,
        maxCost: 2.5,
        wait: true,
        interval: 1.5,
        output: "-",
        format: "jsonl",
        yes: true,
        ledger: true,
        ifBusy: "wait",
      },
    ]);
    expect(await parsed(submitCommand, ["crm.csv", "--type", "carrier_batch", "--wait", "-o", "r.xlsx", "--report", "r.html"])).toEqual([
      "crm.csv",
      { type: "carrier_batch", wait: true, output: "r.xlsx", report: "r.html", ledger: true, ifBusy: "wait" },
    ]);
    expect(
      await parsed(submitCommand, [
        "crm.csv",
        "--type",
        "carrier_batch",
        "--max-age",
        "7d",
        "--no-ledger",
        "--changes",
        "c.csv",
        "--if-busy",
        "exit",
      ]),
    ).toEqual(["crm.csv", { type: "carrier_batch", maxAge: 604800, ledger: false, changes: "c.csv", ifBusy: "exit" }]);
    expect(
      await parsed(submitCommand, [
        "crm.csv",
        "--type",
        "carrier_batch",
        "--wait",
        "--changes",
        "c.csv",
        "--changes-appeared-left",
        "--changes-summary",
        "--exit-on-change",
        "--on-done",
        "sh -c 'echo done'",
        "--no-notify",
      ]),
    ).toEqual([
      "crm.csv",
      {
        type: "carrier_batch",
        wait: true,
        changes: "c.csv",
        changesAppearedLeft: true,
        changesSummary: true,
        exitOnChange: true,
        onDone: "sh -c 'echo done'",
        notify: false,
        ledger: true,
        ifBusy: "wait",
      },
    ]);
    expect(await refusal(submitCommand, ["crm.csv", "--type", "carrier_batch", "--notify-format", "teams"])).toBe(
      "commander.invalidArgument",
    );
    expect(await refusal(submitCommand, ["crm.csv", "--type", "carrier_batch", "--if-busy", "later"])).toBe("commander.invalidArgument");
    expect(await refusal(submitCommand, ["crm.csv", "--country", "GB"])).toBe("commander.missingMandatoryOptionValue");
    expect(await refusal(submitCommand, ["crm.csv", "--type", "carrier_batch", "--max-cost", "lots"])).toBe("commander.invalidArgument");
  });

  it("status", async () => {
    expect(await parsed(statusCommand, [])).toEqual([[], {}]);
    expect(await parsed(statusCommand, ["a1", "b2", "--limit", "1_000"])).toEqual([["a1", "b2"], { limit: 1000 }]);
    expect(await refusal(statusCommand, ["--limit", "0"])).toBe("commander.invalidArgument");
  });

  it("wait", async () => {
    expect(await parsed(waitCommand, ["-", "--interval", "0.5", "--timeout", "3600"])).toEqual([["-"], { interval: 0.5, timeout: 3600 }]);
    expect(
      await parsed(waitCommand, ["a1", "--notify", "https://hooks.example.com/x", "--notify-format", "slack", "--no-on-done"]),
    ).toEqual([["a1"], { notify: "https://hooks.example.com/x", notifyFormat: "slack", onDone: false }]);
    expect(await refusal(waitCommand, [])).toBe("commander.missingArgument");
  });

  it("download", async () => {
    expect(await parsed(downloadCommand, ["a1", "--join", "crm.csv", "-o", "out.csv", "--force", "--strict"])).toEqual([
      ["a1"],
      { join: "crm.csv", output: "out.csv", force: true, strict: true, ledger: true },
    ]);
    expect(await refusal(downloadCommand, ["a1", "--format", "xml"])).toBe("commander.invalidArgument");
    expect(await parsed(downloadCommand, ["a1", "b2", "--format", "xlsx", "-o", "r.xlsx", "--report", "r.html"])).toEqual([
      ["a1", "b2"],
      { format: "xlsx", output: "r.xlsx", report: "r.html", ledger: true },
    ]);
  });

  it("report", async () => {
    expect(await parsed(reportCommand, ["a1", "b2", "-o", "report.html", "--force"])).toEqual([
      ["a1", "b2"],
      { output: "report.html", force: true },
    ]);
    expect(await refusal(reportCommand, [])).toBe("commander.missingArgument");
  });

  it("balance", async () => {
    expect(await parsed(balanceCommand, [])).toEqual([]);
    expect(await refusal(balanceCommand, ["--frobnicate"])).toBe("commander.unknownOption");
  });

  it("validate", async () => {
    expect(
      await parsed(validateCommand, [
        "-",
        "--country",
        "GB",
        "--require-country-code",
        "--strict-region",
        "--rejects",
        "r.csv",
        "--threads",
        "2",
      ]),
    ).toEqual(["-", { country: "GB", requireCountryCode: true, strictRegion: true, rejects: "r.csv", threads: 2 }]);
    expect(await refusal(validateCommand, ["list.txt", "--threads", "-1"])).toBe("commander.invalidArgument");
  });

  it("retry-failed", async () => {
    expect(
      await parsed(retryFailedCommand, ["a1", "--dry-run", "--max-cost", "3", "--wait", "--timeout", "60", "-o", "retried.csv"]),
    ).toEqual([["a1"], { dryRun: true, maxCost: 3, wait: true, timeout: 60, output: "retried.csv", ifBusy: "wait" }]);
    expect(await parsed(retryFailedCommand, ["a1", "--wait", "-o", "-", "--format", "xlsx"])).toEqual([
      ["a1"],
      { wait: true, output: "-", format: "xlsx", ifBusy: "wait" },
    ]);
  });

  it("sandbox", async () => {
    expect(await parsed(sandboxCommand, [])).toEqual([{ host: "127.0.0.1", port: 0 }]);
    expect(
      await parsed(sandboxCommand, [
        "--port",
        "8787",
        "--fail-rate",
        "0.25",
        "--result-format",
        "zip",
        "--seed",
        "0",
        "--separate-result-origin",
      ]),
    ).toEqual([{ host: "127.0.0.1", port: 8787, failRate: 0.25, resultFormat: "zip", seed: 0, separateResultOrigin: true }]);
    expect(await refusal(sandboxCommand, ["--chaos", "2"])).toBe("commander.invalidArgument");
  });

  it("demo", async () => {
    expect(await parsed((invoke, run) => demoCommand(invoke, main, run), ["--dir", "out"])).toEqual([{ dir: "out" }]);
  });

  it("config and its subcommands", async () => {
    const calls: unknown[][] = [];
    const record =
      (name: string) =>
      async (_ctx: Context, ...args: unknown[]) =>
        void calls.push([name, ...args]);
    const runs: ConfigRuns = { set: record("set"), get: record("get"), list: record("list"), unset: record("unset"), path: record("path") };
    for (const argv of [
      ["set", "api-key"],
      ["set", "base-url", "https://api.example.com"],
      ["set", "webhook-secret", "--generate"],
      ["get", "base-url"],
      ["list"],
      ["unset", "api-key"],
      ["path"],
    ]) {
      await configCommand(invoke, runs).exitOverride().parseAsync(argv, { from: "user" });
    }
    expect(calls).toEqual([
      ["set", "api-key", undefined, {}],
      ["set", "base-url", "https://api.example.com", {}],
      ["set", "webhook-secret", undefined, { generate: true }],
      ["get", "base-url"],
      ["list"],
      ["unset", "api-key"],
      ["path"],
    ]);
  });
});

describe("--timeout and --request-timeout", () => {
  /** What main builds the run's Context from: the flags of the command and of the program above it. */
  async function contextFlags(define: (invoke: Invoke) => CommandUnknownOpts, argv: string[]): Promise<Record<string, unknown>> {
    let flags: Record<string, unknown> = {};
    const capture: Invoke = async (cmd) => {
      flags = cmd.optsWithGlobals();
    };
    await define(capture)
      .exitOverride()
      .configureOutput({ writeErr: () => {} })
      .parseAsync(argv, { from: "user" });
    return flags;
  }

  it.each([
    ["status", statusCommand, []],
    ["wait", waitCommand, ["a1"]],
    ["download", downloadCommand, ["a1"]],
    ["balance", balanceCommand, []],
    ["retry-failed", retryFailedCommand, ["a1"]],
    ["submit", submitCommand, ["list.txt", "--type", "carrier_batch"]],
  ] as const)("%s takes both, in seconds, for the run's Context", async (_name, define, args) => {
    const flags = await contextFlags(define, [...args, "--timeout", "90", "--request-timeout", "2.5"]);
    expect(flags).toMatchObject({ timeout: 90, requestTimeout: 2.5 });
  });

  it("refuses a --request-timeout of 0, which would mean no deadline at all, and a timeout that is not a number", async () => {
    expect(await refusal(balanceCommand, ["--request-timeout", "0"])).toBe("commander.invalidArgument");
    expect(await refusal(balanceCommand, ["--timeout", "soon"])).toBe("commander.invalidArgument");
  });

  it("reads durations with a unit, in seconds", async () => {
    const flags = await contextFlags(waitCommand, ["a1", "--timeout", "12h", "--request-timeout", "90s"]);
    expect(flags).toMatchObject({ timeout: 43_200, requestTimeout: 90 });
  });
});

describe("every duration flag (issue 18, point 6)", () => {
  /** Every option of every command (config's subcommands included) whose value is a duration. */
  function durationOptions(): Array<{ command: string; option: Option }> {
    const program = buildProgram(testRuntime().runtime, invoke, "0.0.0", { main });
    const walk = (command: CommandUnknownOpts): Array<{ command: string; option: Option }> => [
      ...command.options.filter((option) => option.flags.includes("<sec>")).map((option) => ({ command: command.name(), option })),
      ...command.commands.flatMap(walk),
    ];
    return walk(program);
  }

  it("are the flags that take a time, each on one parser", () => {
    const names = new Set(durationOptions().map(({ option }) => option.long));
    expect([...names].sort()).toEqual(["--interval", "--request-timeout", "--result-delay", "--retry-after", "--timeout", "--url-ttl"]);
    for (const { command, option } of durationOptions()) {
      expect(option.parseArg, `${command} ${option.long}`).toBeDefined();
      expect(option.description, `${command} ${option.long} says its unit`).toContain("seconds, or with a unit: 90s, 15m, 12h");
    }
  });

  it("reads a bare number as seconds and a unit as named, everywhere", () => {
    for (const { command, option } of durationOptions()) {
      const parse = (text: string): unknown => option.parseArg!(text, undefined);
      expect(parse("45"), `${command} ${option.long}`).toBe(45);
      expect([parse("90s"), parse("15m"), parse("2h"), parse("1d")], `${command} ${option.long}`).toEqual([90, 900, 7200, 86_400]);
    }
  });

  it("refuses, everywhere, milliseconds typed as seconds and anything longer than a timer holds, saying the unit", () => {
    for (const { command, option } of durationOptions()) {
      for (const text of ["3600000", "2592000", "30d"]) {
        expect(() => option.parseArg!(text, undefined), `${command} ${option.long} ${text}`).toThrow(InvalidArgumentError);
      }
      expect(() => option.parseArg!("3600000", undefined)).toThrow(
        "3600000 is read as seconds (41.7 days); the longest is 2147483 seconds (24.8 days).",
      );
    }
  });
});

describe("a command's run, called directly with a Context", () => {
  const sandbox = e2eSandboxes();

  it("waits for a task and prints its final state, then lists it among the journal's recent tasks", async () => {
    const e = await sandbox({ minTaskSize: 1 });
    await allowSmallTasks(e);
    const submitted = await e.run(submitArgs(e.file("list.txt", listText(5)), "--yes", "--quiet"));
    const [id] = lines(submitted.stdout);
    const { runtime, stdout } = testRuntime({ env: e.env, now: () => e.clock.ms, sleep: async (ms) => void (e.clock.ms += ms) });
    const ctx = await createContext(runtime, {});
    try {
      await waitAction(ctx, [id!], { interval: 1 });
      await statusAction(ctx, [], { limit: 10 });
    } finally {
      await ctx.dispose();
    }
    const [waited, header, row] = lines(stdout());
    expect(waited).toBe(`${id}\tsuccess`);
    expect(header).toBe("ID\tPRODUCT\tCOUNTRY\tSTATUS\tTOTAL\tCHECKED\tNO RESULT\tCREATED");
    expect(row).toMatch(new RegExp(`^${id}\tnumber_validation_batch\tGB\tsuccess\t5\t`));
  });
});

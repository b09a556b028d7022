import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { packageFile } from "../../package-files.js";
import { startSandbox } from "../../sandbox/index.js";
import { BulkcheckError } from "../../errors.js";
import type { Context, Runtime } from "../context.js";
import { kindForExitCode } from "../exit-codes.js";
import { absolutePath } from "../paths.js";
import { formatUsd } from "../../tasks/cost.js";

/** bulkcheck's entry point (src/main.ts), which runs each step of the demo in-process. */
export type Main = (argv: readonly string[], runtime: Runtime) => Promise<number>;

/** The sample CRM export shipped with the package. */
const SAMPLE_LIST = packageFile("examples", "contacts.csv");
/** The demo's submit, run twice to show that a re-run pays for nothing twice. */
const SUBMIT_SAMPLE = ["submit", SAMPLE_LIST, "--type", "carrier_batch", "--country", "GB", "--yes"];

export interface DemoOptions {
  dir?: string;
}

/**
 * The whole flow on the bundled sample list against an in-process sandbox, with
 * a private config directory so the user's own settings and journal are never
 * touched. Each step is the real command, run in-process; what it printed is
 * shown under it. The path of the joined result goes to stdout.
 */
export async function demoAction(ctx: Context, options: DemoOptions, main: Main): Promise<void> {
  const dir = options.dir ? absolutePath(ctx, options.dir) : await mkdtemp(join(tmpdir(), "bulkcheck-demo-"));
  await mkdir(dir, { recursive: true });
  // Like the real service, some numbers get no result: the re-run shows that they are not paid for again either.
  const sandbox = await startSandbox({ port: 0, noResultRate: 0.02 });
  const env = {
    ...ctx.env,
    BULKCHECK_CONFIG_DIR: join(dir, "config"),
    BULKCHECK_BASE_URL: sandbox.url,
    BULKCHECK_API_KEY: sandbox.apiKey,
    BULKCHECK_PROFILE: "",
  };
  const say = (text: string) => ctx.io.stderr.write(text + "\n");

  /** Runs one step; a step that fails ends the demo. Returns what it wrote to stdout. */
  const step = async (title: string, argv: string[]): Promise<string> => {
    say(`\n${ctx.printer.style("bold", `# ${title}`)}\n${ctx.printer.style("cyan", `$ bulkcheck ${argv.join(" ")}`)}`);
    const stdout = capture();
    const stderr = capture();
    const runtime: Runtime = { ...ctx, env, io: { stdin: Readable.from([]), stdout: stdout.stream, stderr: stderr.stream } };
    const code = await main(argv, runtime);
    for (const line of (stderr.text() + stdout.text()).trimEnd().split("\n")) say(`  ${line}`);
    if (code !== 0) throw stepFailure(title, code);
    return stdout.text();
  };

  try {
    say(`bulkcheck demo: a local sandbox of the service is running at ${sandbox.url}; nothing here costs money.`);
    say(`Sample list: ${SAMPLE_LIST}\nFiles go to: ${dir}`);
    const before = balanceMicros(await step("What the account holds", ["balance"]));
    await step("Check the list locally (no network, no key): what would be uploaded, and why rows are excluded", [
      "validate",
      SAMPLE_LIST,
      "--country",
      "GB",
      "--rejects",
      join(dir, "rejects.csv"),
    ]);
    const submitted = await step("Submit it: only the numbers that can be checked are uploaded and paid for", SUBMIT_SAMPLE);
    const ids = submitted.trim().split("\n");
    await step("Wait for the task (a local sandbox allows polling faster than the service's 30 s)", ["wait", ...ids, "--interval", "0.5"]);
    const joined = join(dir, "contacts-checked.csv");
    await step("Download the result, joined back to the source rows", ["download", ...ids, "--join", SAMPLE_LIST, "-o", joined]);
    const rerun = await step(
      "Re-running the same submit is safe: every number was just checked (with a result or without), so nothing is uploaded or reserved",
      SUBMIT_SAMPLE,
    );
    if (rerun.trim() !== "") throw new Error(`the demo's re-run submitted task(s) ${rerun.trim()}`);
    const after = balanceMicros(await step("Only the checked numbers were charged", ["balance"]));
    say(
      `\nCharged in all: ${formatUsd(before - after)} for the numbers checked once. The submit reserved the whole list; when the task finished, the numbers without a result were refunded, and the re-run reserved nothing.`,
    );
    say(`\nDone. Your joined file: ${joined}\nRejected rows and why: ${join(dir, "rejects.csv")}`);
    ctx.printer.data(joined);
  } finally {
    await sandbox.close();
  }
}

/**
 * A step that failed ends the demo as the step ended, with its exit code: a full disk, a
 * network gone or a file in the way is no bulkcheck bug (exit 1 is, as for any command).
 */
function stepFailure(title: string, code: number): BulkcheckError {
  const kind = kindForExitCode(code);
  return new BulkcheckError(
    kind,
    `The demo stopped at its step "${title}", which ended with exit code ${code}; what it printed is above.`,
    {
      hint:
        kind === "unexpected"
          ? "This is a bulkcheck bug. Run the step's command again with --verbose and report what it prints."
          : "Fix what the step's message says, then run bulkcheck demo again.",
    },
  );
}

/** The micros in `balance`'s line ("$10.00 (10000000 micros)"). */
function balanceMicros(printed: string): number {
  const micros = /\((\d+) micros\)/.exec(printed)?.[1];
  if (micros === undefined) throw new Error(`the demo could not read the balance from "${printed.trim()}"`);
  return Number(micros);
}

function capture() {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { stream, text: () => text };
}

// A Node script using the package's entries as a user's would, run where "bulkcheck"
// resolves to the package (scripts/test-package.mjs, test/package/entries.test.ts):
// a sandbox, the API client against it, a typed error, and a list prepared on a worker.
// Prints what it saw as one JSON line.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BulkcheckError, classifyCell, createClient, prepareList } from "bulkcheck";
import { startSandbox } from "bulkcheck/sandbox";

const sandbox = await startSandbox({ port: 0, balanceMicros: 250_000 });
const dir = await mkdtemp(join(tmpdir(), "bulkcheck-smoke-"));
try {
  const client = createClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
  const intruder = createClient({ baseUrl: sandbox.url, apiKey: "sk_wrong_0000000000000000", retry: { maxAttempts: 1 } });
  const rejected = await intruder.getBalance().then(
    () => "accepted",
    (error) => (error instanceof BulkcheckError ? `${error.name} (${error.kind})` : String(error)),
  );
  const list = join(dir, "list.csv");
  await writeFile(list, "name,phone\nAda,+44 7400 123456\nBob,07400 123457\nEve,not a number\n");
  const prepared = await prepareList({ source: list, country: "GB", outputDir: dir, workers: 1 });
  const result = {
    balance: (await client.getBalance()).balance_micros,
    wrongKey: rejected,
    cell: classifyCell("+44 7400 123456", { country: "GB" }),
    kept: prepared.summary.kept,
    invalid: prepared.summary.invalid_cnt,
  };
  await Promise.all([client.close(), intruder.close()]);
  console.log(JSON.stringify(result));
} finally {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
}

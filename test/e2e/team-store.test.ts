import { readFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { bulkcheckCommand, startInTerminal } from "../helpers/terminal.js";
import { e2eSandboxes, gbList, identifier, lines, listedRuns, listText, submitAs, until, WAITING, type E2e } from "../helpers/sandbox.js";

/**
 * A team shares one store on PostgreSQL (a real server the test run started): two CLI
 * processes with config directories of their own play two machines.
 */
const sandbox = e2eSandboxes();
const ACTIVITY = "number_activity_batch";

/** The environment of a second machine: its own config and state directory, the same service and store. */
function machine(storeUrl: string): Record<string, string> {
  return { BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-machine-"), BULKCHECK_STORE_URL: storeUrl };
}

function activity(file: string, ...extra: string[]): string[] {
  return submitAs(file, ACTIVITY, "GB", ...extra);
}

/**
 * A TCP relay to PostgreSQL that a test can cut (a server restarted, a network gone) and open
 * again, or hush: from then on it accepts new connections and never answers them (a hung
 * proxy), counted in `hushed`, while the connections it relays already go on.
 */
async function relay(target: URL): Promise<{
  url: string;
  cut(): Promise<void>;
  open(): Promise<void>;
  hush(): void;
  hushed(): number;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let hushed: number | undefined;
  const open = async () => {
    hushed = undefined;
    server = createServer((client) => {
      if (hushed !== undefined) {
        hushed++;
        sockets.add(client.on("error", () => undefined));
        return;
      }
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("error", () => undefined).on("close", () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server!.listen(port, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  };
  const cut = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server?.close(resolve));
  };
  await open();
  const url = new URL(target.href);
  url.host = `127.0.0.1:${port}`;
  return { url: url.href, cut, open, hush: () => void (hushed ??= 0), hushed: () => hushed ?? 0, close: cut };
}

/** A server that accepts connections and never says a word (a store behind a hung proxy); `accepted` settles at its first connection. */
async function silentServer(): Promise<{ url: string; accepted: Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accept: () => void = () => undefined;
  const accepted = new Promise<void>((resolve) => (accept = resolve));
  const server = createServer((socket) => {
    sockets.add(socket.on("error", () => undefined));
    accept();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgres://nobody@127.0.0.1:${port}/store?connect_timeout=60`,
    accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("a team's store on PostgreSQL", () => {
  it("serves the second machine the first machine's fresh results: no second task", async () => {
    const e = await sandbox();
    const storeUrl = await createTestDatabase();
    const list = e.file("list.txt", listText(500));
    const first = await e.run([...activity(list, ...WAITING, "-o", "a.csv")], { env: machine(storeUrl) });
    expect(first.code, first.stderr).toBe(0);
    const second = await e.run([...activity(list, "--wait", "-o", "b.csv")], { env: machine(storeUrl) });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain("nothing to upload");
    expect(e.state().tasks).toHaveLength(1);
    const rows = (name: string) => lines(readFileSync(join(e.dir, name), "utf8")).sort();
    expect(rows("b.csv")).toEqual(rows("a.csv"));
  });

  it("makes one run and one task when two machines start the same list at once, and both write the output", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 500 });
    const storeUrl = await createTestDatabase();
    const list = e.file("list.txt", listText(500));
    // The same path on both machines (a shared mount): the same command.
    const [a, b] = [machine(storeUrl), machine(storeUrl)];
    const runs = [
      e.spawn([...activity(list, ...WAITING, "-o", "a.csv")], { env: a }),
      e.spawn([...activity(list, ...WAITING, "-o", "b.csv")], { env: b }),
    ];
    const [first, second] = await Promise.all(runs.map((run) => run.done));
    expect(first!.code, first!.stderr).toBe(0);
    expect(second!.code, second!.stderr).toBe(0);
    expect(e.state().tasks).toHaveLength(1);
    expect(lines(readFileSync(join(e.dir, "a.csv"), "utf8"))).toHaveLength(501);
    expect(lines(readFileSync(join(e.dir, "b.csv"), "utf8")).sort()).toEqual(lines(readFileSync(join(e.dir, "a.csv"), "utf8")).sort());
  });

  it("imports a machine's local history, shows who ran what, and a forget on one machine is seen on the other", async () => {
    const e = await sandbox();
    const storeUrl = await createTestDatabase();
    const list = e.file("list.txt", listText(500));
    const local = { BULKCHECK_CONFIG_DIR: tempDir("bulkcheck-local-") };
    expect((await e.run([...activity(list, ...WAITING, "-o", "local.csv")], { env: local })).code).toBe(0);
    const imported = await e.run(["store", "import", "--json"], { env: { ...local, BULKCHECK_STORE_URL: storeUrl } });
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ runs: 1, tasks: 1, results: 500 });
    const again = await e.run(["store", "import", "--json"], { env: { ...local, BULKCHECK_STORE_URL: storeUrl } });
    expect(JSON.parse(again.stdout)).toMatchObject({ runs: 0, tasks: 0, results: 0 });

    const other = machine(storeUrl);
    const { runs } = await listedRuns(e, [], { env: other });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.host).toBeTruthy();
    const [number] = gbList(1);
    // On a shared store, where no one can confirm, a forget needs --yes.
    const forgot = await e.run(["ledger", "forget", number!, "--yes"], { env: { ...local, BULKCHECK_STORE_URL: storeUrl } });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect((await e.run(["ledger", "lookup", number!, "--json"], { env: other })).stdout).toBe("");
    expect((await e.run(["ledger", "lookup", gbList(2)[1]!, "--json"], { env: other })).stdout).toContain(identifier(gbList(2)[1]!));
    const status = await e.run(["store", "status", "--json"], { env: other });
    expect(JSON.parse(status.stdout)).toMatchObject({ kind: "postgres", runs: 1, tasks: 1, results: 499 });
    expect(status.stdout).not.toContain(new URL(storeUrl).password);
  });

  it("ends with exit 7 when the database goes away mid-run, and the re-run finishes it without a second charge", async () => {
    const e: E2e = await sandbox({ fakeClock: false, numbersPerSecond: 250 });
    const database = await relay(new URL(await createTestDatabase()));
    try {
      const env = machine(database.url);
      const list = e.file("list.txt", listText(500));
      const argv = activity(list, ...WAITING, "-o", "out.csv");
      const run = e.spawn(argv, { env });
      await until(() => e.state().tasks.length === 1 && run.output().stderr.includes("submitted"), 20_000);
      await database.cut();
      const stopped = await run.done;
      expect(stopped.code, stopped.stderr).toBe(7);
      expect(stopped.stderr).not.toContain(new URL(database.url).password);
      await database.open();
      const again = await e.bin(argv, { env });
      expect(again.code, again.stderr).toBe(0);
      expect(e.state().tasks).toHaveLength(1);
      expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(501);
    } finally {
      await database.close();
    }
  });

  it.each([
    ["--timeout runs out", ["--timeout", "8"], 8],
    ["SIGTERM comes", [], 143],
  ] as const)(
    "stops the recording's own connection to a store that stopped answering when %s, and the same command then records the result once",
    async (_, extra, exitCode) => {
      const e: E2e = await sandbox({ fakeClock: false, numbersPerSecond: 250 });
      const database = await relay(new URL(await createTestDatabase()));
      try {
        // connect_timeout=60: only --timeout or the signal can end the recording's connecting sooner.
        const env = machine(`${database.url}?connect_timeout=60`);
        const list = e.file("list.txt", listText(500));
        const argv = activity(list, ...WAITING, "-o", "out.csv");
        const run = e.spawn([...argv, ...extra], { env });
        await until(() => e.state().tasks.length === 1 && run.output().stderr.includes("submitted"), 20_000);
        // The command's connections go on; the recording worker's, made once the result is downloaded, is never answered.
        database.hush();
        if (exitCode === 143) {
          await until(() => database.hushed() > 0, 20_000);
          run.child.kill("SIGTERM");
        }
        const stopped = await run.done;
        expect(stopped.code, stopped.stderr).toBe(exitCode);
        expect(stopped.stderr).toContain(`Resume with: bulkcheck ${argv.join(" ")}`);
        expect(stopped.stderr).not.toContain(new URL(database.url).password);
        await database.cut();
        await database.open();
        const again = await e.bin(argv, { env });
        expect(again.code, again.stderr).toBe(0);
        expect(e.state().tasks).toHaveLength(1);
        expect(lines(readFileSync(join(e.dir, "out.csv"), "utf8"))).toHaveLength(501);
        const stats = await e.bin(["ledger", "stats", "--json"], { env });
        expect(stats.stdout).toContain('"results":500');
      } finally {
        await database.close();
      }
    },
  );

  it("ends both of two identical submit --wait started at once on terminals, the one that waited for the other too", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 500 });
    const env = { ...e.env, ...machine(await createTestDatabase()) };
    const list = e.file("list.txt", listText(500));
    // The balance answers slowly: both read the list and plan before either records the run, so
    // one finds the run taken, waits for the other (its first plan's progress line already up),
    // and plans again (--max-age 0: with parts to upload, and a progress line of their own).
    e.sandbox.scriptFaults([{ route: "balance", fault: "slow", delayMs: 1000, times: 2 }]);
    const argv = activity(list, ...WAITING, "-o", "out.csv", "--force", "--max-age", "0");
    // Pseudo-terminals with a width, so that spinners turn.
    const sessions = [0, 1].map(() => startInTerminal(`stty cols 120 rows 40; exec ${bulkcheckCommand(argv)}`, { env, cwd: e.dir }));
    const ended = await Promise.all(sessions.map((session) => session.done));
    for (const { code, screen } of ended) expect(code, screen).toBe(0);
    expect(ended.filter(({ screen }) => screen.includes("being carried on by process"))).toHaveLength(1);
  });

  it("gives up connecting to a store that never answers when --timeout runs out, however long connect_timeout is: exit 8, as --timeout says (issue 35, point 9)", async () => {
    const e = await sandbox({ fakeClock: false });
    const store = await silentServer();
    try {
      const list = e.file("list.txt", listText(500));
      const out = await e.bin([...activity(list, "--yes", "--timeout", "1")], { env: machine(store.url) });
      expect(out.code, out.stderr).toBe(8);
      expect(out.stderr).toMatch(/cannot be reached \(.*\): the --timeout of 1 s ran out\./);
      expect(e.state().tasks).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  it("stops connecting to a store that never answers on SIGTERM (143)", async () => {
    const e = await sandbox({ fakeClock: false });
    const store = await silentServer();
    try {
      const run = e.spawn([...activity(e.file("list.txt", listText(500)), "--yes")], { env: machine(store.url) });
      await store.accepted;
      run.child.kill("SIGTERM");
      const out = await run.done;
      expect(out.code, out.stderr).toBe(143);
    } finally {
      await store.close();
    }
  });

  it("fails before any upload when the store cannot be reached (exit 7), naming the host but not the password", async () => {
    const e = await sandbox();
    const url = new URL(await createTestDatabase());
    url.port = "1";
    const list = e.file("list.txt", listText(500));
    const out = await e.run([...activity(list, "--yes")], { env: machine(url.href) });
    expect(out.code).toBe(7);
    expect(out.stderr).toContain("127.0.0.1");
    if (url.password) expect(out.stderr).not.toContain(url.password);
    expect(e.state().tasks).toHaveLength(0);
  });
});

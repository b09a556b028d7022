import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCore } from "./core.js";
import { resolveOptions, type SandboxOptions } from "./options.js";
import type { ScriptedFault } from "./faults.js";
import { createRequestHandler } from "./server.js";
import { uploadedLines } from "./routes/admin.js";
import { buildState, type SandboxState } from "./state.js";
import { WEBHOOKS_PATH, type WebhookDelivery } from "./webhooks.js";

export { SANDBOX_DEFAULTS, type SandboxOptions } from "./options.js";
export { parsePrices } from "./prices.js";
export { FAULT_KINDS, type FaultKind, type FaultRoute, type ScriptedFault } from "./faults.js";
export { HTTP_STATUS_BY_CODE, httpStatusFor } from "./http-status.js";
export type { SandboxState, StateTask } from "./state.js";
export type { StatsSnapshot } from "./stats.js";
export type { LedgerEntry } from "./ledger.js";
export type { WebhookDelivery, WebhookSigned, WebhookVerifier } from "./webhooks.js";

/**
 * A running sandbox: a local, spec-faithful emulator of the whole service.
 * The API lives under `{url}/api/v1`; admin endpoints (`GET /_sandbox/state`,
 * `POST /_sandbox/faults`, same X-API-Key) are documented in routes/admin.ts; its webhook
 * receiver (`/webhooks`, no key) in webhooks.ts.
 */
export interface Sandbox {
  /** Base URL, e.g. http://127.0.0.1:43121 (no trailing slash). */
  url: string;
  apiKey: string;
  /** Where --notify can post to it: `{url}/webhooks`. */
  webhookUrl: string;
  /** The deliveries its webhook receiver got, oldest first (as `GET /webhooks` lists them). */
  webhooks(): WebhookDelivery[];
  /** Same content as `GET /_sandbox/state`, settling tasks finished by now (a task still being classified shows as preparing). */
  inspect(): SandboxState;
  /** The lines of a task's uploaded file (undefined for an unknown id), as GET /_sandbox/tasks/{id}/lines gives them. */
  uploadedLines(taskId: string): string[] | undefined;
  /** Queues faults for the next matching requests; throws on an invalid entry. */
  scriptFaults(faults: ScriptedFault[]): void;
  /** Closes listeners and open sockets, stops background work, deletes result files. */
  close(): Promise<void>;
}

function listen(server: Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address() as AddressInfo;
      // A wildcard listener is reachable on loopback; "0.0.0.0" is not a URL every client can dial.
      const reachable = address.address === "0.0.0.0" ? "127.0.0.1" : address.address === "::" ? "::1" : address.address;
      resolve(`http://${address.family === "IPv6" ? `[${reachable}]` : reachable}:${address.port}`);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Starts a sandbox; rejects with a UsageError for a bad option, and with Node's own error (EADDRINUSE…) when it cannot listen. */
export async function startSandbox(options: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  const resolved = resolveOptions(options);
  const servers = [createServer()];
  if (resolved.separateResultOrigin) servers.push(createServer());
  const lifetime = new AbortController();
  const tempDir = await mkdtemp(join(tmpdir(), "bulkcheck-sandbox-"));
  const close = async (): Promise<void> => {
    lifetime.abort();
    await Promise.all(servers.map(closeServer));
    await rm(tempDir, { recursive: true, force: true });
  };
  try {
    const url = await listen(servers[0]!, resolved.host, resolved.port);
    const resultOrigin = servers[1] ? await listen(servers[1], resolved.host, 0) : url;
    const core = createCore(resolved, { resultOrigin, tempDir, lifetime: lifetime.signal });
    servers[0]!.on("request", createRequestHandler(core, "api"));
    servers[1]?.on("request", createRequestHandler(core, "results"));
    let closing: Promise<void> | undefined;
    return {
      url,
      apiKey: resolved.apiKey,
      webhookUrl: `${url}${WEBHOOKS_PATH}`,
      webhooks: () => core.webhooks.list(),
      inspect() {
        const nowMs = resolved.now();
        core.tasks.refreshAllNow(nowMs);
        return buildState(core, nowMs);
      },
      uploadedLines: (taskId) => {
        const task = core.tasks.get(taskId);
        return task && uploadedLines(task);
      },
      scriptFaults: (faults) => core.faults.script(faults),
      close: () => (closing ??= close()),
    };
  } catch (error) {
    await close();
    throw error;
  }
}

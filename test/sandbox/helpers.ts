import { Readable } from "node:stream";
import { afterEach } from "vitest";
import { Agent, FormData, request } from "undici";
import { startSandbox, type Sandbox, type SandboxOptions, type SandboxState } from "../../src/sandbox/index.js";
import type { Envelope, Task } from "../../src/spec/task.js";

export const START_MS = Date.UTC(2025, 0, 15, 9, 0, 0);

/** A sandbox on 127.0.0.1:0 with an injected clock, an undici Agent, and captured log lines. */
export interface Harness {
  sandbox: Sandbox;
  agent: Agent;
  logs: string[];
  clock: { ms: number };
  advance(seconds: number): void;
  close(): Promise<void>;
}

export async function startHarness(options: Partial<SandboxOptions> = {}): Promise<Harness> {
  const clock = { ms: START_MS };
  const logs: string[] = [];
  const sandbox = await startSandbox({ now: () => clock.ms, log: (line) => logs.push(line), noResultRate: 0, ...options });
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  let closing: Promise<void> | undefined;
  return {
    sandbox,
    agent,
    logs,
    clock,
    advance: (seconds) => void (clock.ms += seconds * 1000),
    close: () =>
      (closing ??= (async () => {
        await agent.close();
        await sandbox.close();
      })()),
  };
}

export interface Reply<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Envelope<T>;
}

async function envelopeOf<T>(response: Awaited<ReturnType<typeof request>>): Promise<Reply<T>> {
  return { status: response.statusCode, headers: response.headers, body: (await response.body.json()) as Envelope<T> };
}

/** GET an API or admin path; `key: null` sends no X-API-Key. */
export async function apiGet<T = Task>(h: Harness, path: string, key: string | null = h.sandbox.apiKey): Promise<Reply<T>> {
  const headers: Record<string, string> = key === null ? {} : { "x-api-key": key };
  return envelopeOf<T>(await request(`${h.sandbox.url}${path}`, { headers, dispatcher: h.agent }));
}

export interface SubmitInput {
  serviceType?: string;
  country?: string;
  lines?: readonly string[];
  content?: string;
  fileName?: string;
  idempotencyKey?: string;
  apiKey?: string;
  /** Put country after file in the multipart body. */
  countryAfterFile?: boolean;
}

export function submitForm(input: SubmitInput): FormData {
  const form = new FormData();
  if (input.serviceType !== undefined) form.append("service_type", input.serviceType);
  const file = new Blob([input.content ?? (input.lines ?? []).join("\n") + "\n"], { type: "text/plain" });
  if (input.country !== undefined && !input.countryAfterFile) form.append("country", input.country);
  if (input.lines !== undefined || input.content !== undefined) form.append("file", file, input.fileName ?? "numbers.txt");
  if (input.country !== undefined && input.countryAfterFile) form.append("country", input.country);
  return form;
}

export async function submit(h: Harness, input: SubmitInput): Promise<Reply<Task>> {
  const headers: Record<string, string> = { "x-api-key": input.apiKey ?? h.sandbox.apiKey };
  if (input.idempotencyKey !== undefined) headers["idempotency-key"] = input.idempotencyKey;
  const response = await request(`${h.sandbox.url}/api/v1/bulk-tasks`, {
    method: "POST",
    headers,
    body: submitForm(input),
    dispatcher: h.agent,
  });
  return envelopeOf<Task>(response);
}

export async function state(h: Harness): Promise<SandboxState> {
  return (await apiGet<SandboxState>(h, "/_sandbox/state")).body.data;
}

export async function balance(h: Harness): Promise<number> {
  return (await apiGet<{ balance_micros: number }>(h, "/api/v1/balance")).body.data.balance_micros;
}

/** Advances the clock far enough for any test-sized task to finish, then checks it. */
export async function finish(h: Harness, id: string): Promise<Task> {
  h.advance(3600);
  return (await apiGet(h, `/api/v1/bulk-tasks/${id}`)).body.data;
}

export async function download(
  h: Harness,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const response = await request(url, { headers, dispatcher: h.agent });
  return { status: response.statusCode, headers: response.headers, body: Buffer.from(await response.body.arrayBuffer()) };
}

/** `count` distinct valid GB mobile numbers in E.164, from +447410000000 up (Orange's range). */
export function gbNumbers(count: number, offset = 0): string[] {
  return Array.from({ length: count }, (_, i) => `+4474${String(10_000_000 + offset + i).slice(-8)}`);
}

/**
 * A multipart submit body written by hand so a test controls when the file ends:
 * `gate` resolves when the rest may be sent. Only for holding uploads in flight.
 */
export function gatedUpload(
  serviceType: string,
  country: string,
  firstLines: readonly string[],
  gate: Promise<void>,
): { body: Readable; contentType: string } {
  const boundary = "----sandbox-test-boundary";
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="service_type"\r\n\r\n${serviceType}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="country"\r\n\r\n${country}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="list.txt"\r\nContent-Type: text/plain\r\n\r\n`;
  async function* parts(): AsyncGenerator<string> {
    yield head + firstLines.join("\n") + "\n";
    await gate;
    yield `\r\n--${boundary}--\r\n`;
  }
  return { body: Readable.from(parts()), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * A harness factory for a test file: every harness it starts is closed after each test.
 * Call once at the top level of the file.
 */
export function trackedHarnesses(): (options?: Partial<SandboxOptions>) => Promise<Harness> {
  const harnesses: Harness[] = [];
  afterEach(async () => {
    await Promise.all(harnesses.splice(0).map((h) => h.close()));
  });
  return async (options = {}) => {
    const h = await startHarness(options);
    harnesses.push(h);
    return h;
  };
}

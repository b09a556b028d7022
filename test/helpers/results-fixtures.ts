import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import busboy from "busboy";
import { parse } from "csv-parse/sync";
import yazl from "yazl";
import { resultRow, hasNoResult } from "../../src/sandbox/result-values.js";
import type { ServiceType } from "../../src/spec/products.js";
import { API_KEY, listedRuns, type E2e } from "./sandbox.js";

/**
 * What the issue-5 e2e tests (join, formats, retry-failed) need beyond
 * test/helpers/sandbox.ts: small tasks, an oracle for the sandbox's result
 * values, CSV parsing, a recording proxy and a scriptable one-task service.
 */

/** The sandbox's default seed (startE2e does not change it): result values and misses are fixed by it. */
export const SEED = 1;

/** Lets the CLI submit lists of any size (the sandbox must also be started with a low `minTaskSize`). */
export async function allowSmallTasks(e: E2e, maxTaskSize?: number): Promise<void> {
  const settings: Array<[string, number]> = [["min-task-size", 1]];
  if (maxTaskSize !== undefined) settings.push(["max-task-size", maxTaskSize]);
  for (const [key, value] of settings) {
    const out = await e.run(["config", "set", key, String(value)]);
    if (out.code !== 0) throw new Error(`config set ${key} failed: ${out.stderr}`);
  }
}

/** The result columns after `identifier` that the sandbox gives `identifier`, or undefined when it gives none. */
export function expectedResult(product: ServiceType, identifier: string, noResultRate: number): readonly string[] | undefined {
  if (hasNoResult(SEED, product, identifier, noResultRate)) return undefined;
  return resultRow(SEED, product, identifier).slice(1);
}

/** When each task of the store's runs was checked (`runs show --json`), by task id: what a run's `checked_at` column holds. */
export async function checkedAtByTask(e: E2e): Promise<Map<string, string>> {
  const checkedAt = new Map<string, string>();
  for (const { id } of (await listedRuns(e)).runs) {
    const shown = await e.run(["runs", "show", id, "--json"]);
    const { tasks } = JSON.parse(shown.stdout) as { tasks: Array<{ task_id?: string; checked_at?: string }> };
    for (const task of tasks) if (task.task_id && task.checked_at) checkedAt.set(task.task_id, task.checked_at);
  }
  return checkedAt;
}

/** Parses CSV/TSV text like a spreadsheet would (csv-parse, BOM stripped, ragged rows allowed). */
export function parseDelimited(text: string, delimiter = ","): string[][] {
  return parse(text, { delimiter, bom: true, relax_column_count: true });
}

/** Rows of a CSV/TSV as objects keyed by its header. */
export function objectsOf(rows: readonly string[][]): Array<Record<string, string>> {
  const [header = [], ...data] = rows;
  return data.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ""])));
}

/** The data cells of a boxed cli-table3 table (header first), borders dropped. */
export function parseBoxedTable(text: string): string[][] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("│"))
    .map((line) =>
      line
        .slice(1, -1)
        .split("│")
        .map((cell) => cell.trim()),
    );
}

/** A zip holding `entries` (name → content), built in memory. */
export async function zipOf(entries: Record<string, string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(entries)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export interface RecordingProxy {
  /** Base URL to give the CLI instead of the sandbox's. */
  url: string;
  /** The file part of every submit that reached the sandbox, as text, in arrival order. */
  uploads: string[];
  close(): Promise<void>;
}

/**
 * A transparent HTTP proxy in front of the sandbox that keeps a copy of every
 * uploaded list, so a test can see exactly which numbers a task was given
 * (the sandbox's state shows only counts).
 */
export async function recordingProxy(target: string): Promise<RecordingProxy> {
  const uploads: string[] = [];
  const server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("end", () => {
      const bytes = Buffer.concat(body);
      const upstream = request(target + (req.url ?? "/"), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      upstream.end(bytes);
      if (req.method === "POST" && (req.url ?? "").startsWith("/api/v1/bulk-tasks")) recordFile(req.headers, bytes, uploads);
    });
  });
  const url = await listen(server);
  return { url, uploads, close: () => close(server) };
}

function recordFile(headers: IncomingHttpHeaders, bytes: Buffer, into: string[]): void {
  const parser = busboy({ headers });
  parser.on("file", (_name, stream) => {
    const parts: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => parts.push(chunk));
    stream.on("end", () => into.push(Buffer.concat(parts).toString("utf8")));
  });
  parser.end(bytes);
}

/** How a tampering proxy changes what the sandbox sends. */
export interface Tampering {
  /** The task of a check that has finished (data of the envelope), as the CLI will see it. */
  task?: (task: Record<string, unknown>) => Record<string, unknown>;
  /** The result file's text (the sandbox serves CSV). */
  result?: (csv: string) => string;
}

/**
 * A service that keeps the spec's shapes but not its rules: a proxy in front of the
 * sandbox that passes every request on, and rewrites a finished task's answer and its
 * result file as `tamper` says. Result links are pointed at the proxy, so the result
 * comes through it too (its signature still checks out at the sandbox).
 */
export async function tamperingProxy(target: string, tamper: Tampering): Promise<{ url: string; close: () => Promise<void> }> {
  let url = "";
  const server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "/";
      const upstream = request(target + path, { method: req.method, headers: req.headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => parts.push(chunk));
        answer.on("end", () => {
          let text = Buffer.concat(parts).toString("utf8");
          if (req.method === "GET" && /^\/api\/v1\/bulk-tasks\/[0-9a-f]{32}$/.test(path)) {
            const envelope = JSON.parse(text) as { code: number; data: Record<string, unknown> };
            if (envelope.code === 0 && envelope.data.status === "success") {
              const task = tamper.task ? tamper.task(envelope.data) : envelope.data;
              if (typeof task.result_url === "string") task.result_url = task.result_url.replace(target, url);
              text = JSON.stringify({ ...envelope, data: task });
            }
          } else if (path.startsWith("/results/") && answer.statusCode === 200 && tamper.result) {
            text = tamper.result(text);
          }
          const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(text)) };
          res.writeHead(answer.statusCode ?? 502, headers).end(text);
        });
      });
      upstream.on("error", () => res.destroy());
      upstream.end(Buffer.concat(body));
    });
  });
  url = await listen(server);
  return { url, close: () => close(server) };
}

export interface OneTaskServiceOptions {
  /** Fields of the finished task (success_cnt etc.); id, status and result_url are filled in. */
  task?: Record<string, unknown>;
  /** The result file's bytes, as served (CSV text or a zip). */
  body: string | Buffer;
  contentType?: string;
}

/**
 * A minimal service with one finished number_validation_batch task whose result
 * file is exactly `body`, for what the sandbox never sends: a zip without a
 * header, columns in another order, an unknown column, a row count that
 * disagrees with success_cnt.
 */
export async function oneTaskService(options: OneTaskServiceOptions) {
  const id = "cd".repeat(16);
  const results = createServer((_req, res) => {
    res.writeHead(200, { "content-type": options.contentType ?? "application/octet-stream" }).end(options.body);
  });
  const resultsUrl = await listen(results);
  const api = createServer((req, res) => {
    const ok = req.headers["x-api-key"] === API_KEY && req.url === `/api/v1/bulk-tasks/${id}`;
    const task = {
      id,
      product: "number_validation_batch",
      status: "success",
      country: "GB",
      total: 3,
      success_cnt: 3,
      failure_cnt: 0,
      created_at: "2025-01-15T09:00:00Z",
      ...options.task,
      result_url: `${resultsUrl}/files/${id}.bin?sig=abc`,
    };
    const envelope = ok ? { code: 0, msg: "success", data: task } : { code: 40100, msg: "missing or invalid API key", data: {} };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(envelope));
  });
  const url = await listen(api);
  return { id, url, close: () => Promise.all([close(api), close(results)]).then(() => undefined) };
}

/**
 * Writes rows as a spreadsheet would: a field is quoted when it holds the
 * delimiter, a quote, a line break or edge spaces. Returns the text and each
 * record's exact text (without its line end), for byte-for-byte comparisons.
 */
export function delimitedText(rows: readonly (readonly string[])[], delimiter: string, eol: string): { text: string; records: string[] } {
  const records = rows.map((row) =>
    row
      .map((field) => (field.includes(delimiter) || /["\r\n]|^\s|\s$/.test(field) ? `"${field.replaceAll('"', '""')}"` : field))
      .join(delimiter),
  );
  return { text: records.map((record) => record + eol).join(""), records };
}

/** Whether `parts` occur in `text` in this order, without overlapping. */
export function inOrder(text: string, parts: readonly string[]): boolean {
  let from = 0;
  for (const part of parts) {
    const at = text.indexOf(part, from);
    if (at < 0) return false;
    from = at + part.length;
  }
  return true;
}

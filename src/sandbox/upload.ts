import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import busboy from "busboy";
import type { Readable } from "node:stream";
import { isSupportedCountry } from "libphonenumber-js/max";
import { ApiCode } from "../spec/codes.js";
import { canonicalServiceType, isCarrierProduct, type ServiceType } from "../spec/products.js";
import { LineCollector } from "./lines.js";

export interface UploadLimits {
  maxFileBytes: number;
  maxTaskSize: number;
}

export interface Submission {
  product: ServiceType;
  /** Upper-cased ISO code; "" when the carrier product was sent without one. */
  country: string;
  lines: string[];
  /** sha256 of the file's bytes: a replayed Idempotency-Key must come with the same file. */
  sha256: string;
}

export type UploadResult = { kind: "ok"; submission: Submission } | { kind: "rejected"; code: number; msg: string } | { kind: "aborted" };

const FILE_EXTENSION = /\.(txt|csv)$/i;

/**
 * Reads a submit body with busboy. Anything that makes the request unacceptable
 * is answered as soon as it is seen, without reading the rest (unsupported
 * service_type, unknown country, country after file, wrong file type, too big,
 * too many lines). Decisions the spec leaves open: a file other than .txt/.csv
 * (or without a name) is 42200; a repeated field or a second file is 40000; a
 * lower-case country is accepted and upper-cased.
 */
export function readUpload(req: IncomingMessage, limits: UploadLimits): Promise<UploadResult> {
  return new Promise((resolve) => {
    let settled = false;
    let parser: busboy.Busboy;
    const finish = (result: UploadResult): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      resolve(result);
    };
    const reject = (code: number, msg: string): void => finish({ kind: "rejected", code, msg });
    try {
      parser = busboy({
        headers: req.headers,
        limits: { fileSize: limits.maxFileBytes, fields: 20, fieldSize: 1024, parts: 40 },
      });
    } catch {
      resolve({ kind: "rejected", code: ApiCode.UNSUPPORTED_OR_CONFLICT, msg: "the request body must be multipart/form-data" });
      return;
    }
    let product: ServiceType | undefined;
    let country: string | undefined;
    let collector: LineCollector | undefined;
    let fileDone = false;
    const hash = createHash("sha256");

    parser.on("field", (name: string, value: string) => {
      if (settled) return;
      if (name === "service_type") {
        if (product) return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, "conflicting request fields: service_type sent twice");
        product = canonicalServiceType(value);
        if (!product) return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, `unsupported service_type "${value.slice(0, 64)}"`);
      } else if (name === "country") {
        if (collector) return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, "country must come before file in the multipart body");
        if (country !== undefined) return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, "conflicting request fields: country sent twice");
        country = value.trim().toUpperCase();
        if (country !== "" && !(/^[A-Z]{2}$/.test(country) && isSupportedCountry(country))) {
          return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, `unknown country "${value.slice(0, 16)}": use an ISO 3166-1 alpha-2 code`);
        }
      }
    });

    const malformed = (error: Error): void => reject(ApiCode.UNSUPPORTED_OR_CONFLICT, `malformed multipart body: ${error.message}`);
    parser.on("file", (name: string, stream: Readable, info: busboy.FileInfo) => {
      // A body that ends inside a file part fails the part's own stream ("Unexpected end of form"), not only the parser.
      stream.on("error", malformed);
      if (settled) return void stream.resume();
      if (name !== "file")
        return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, `unexpected file part "${name.slice(0, 32)}": send the list as "file"`);
      if (collector) return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, "send exactly one file");
      if (!FILE_EXTENSION.test(info.filename ?? "")) return reject(ApiCode.UNPROCESSABLE, "the file must be a .txt or .csv file");
      if (product && !isCarrierProduct(product) && !country) {
        return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, `country is required for ${product} and must come before file`);
      }
      const lines = new LineCollector();
      collector = lines;
      stream.on("data", (chunk: Buffer) => {
        if (settled) return;
        hash.update(chunk);
        lines.push(chunk);
        if (lines.lines.length > limits.maxTaskSize) {
          reject(ApiCode.UNPROCESSABLE, `the file has more than ${limits.maxTaskSize} numbers (the most one task takes)`);
        }
      });
      stream.on("limit", () => reject(ApiCode.UNPROCESSABLE, `the file is larger than ${limits.maxFileBytes} bytes`));
      stream.on("end", () => {
        fileDone = true;
      });
    });

    parser.on("error", malformed);
    parser.on("close", () => {
      if (settled) return;
      if (!product) return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, "service_type is required");
      if (!collector || !fileDone) return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, "file is required");
      if (!isCarrierProduct(product) && !country) return reject(ApiCode.UNSUPPORTED_OR_CONFLICT, `country is required for ${product}`);
      collector.end();
      if (collector.lines.length > limits.maxTaskSize) {
        return reject(ApiCode.UNPROCESSABLE, `the file has more than ${limits.maxTaskSize} numbers (the most one task takes)`);
      }
      finish({ kind: "ok", submission: { product, country: country ?? "", lines: collector.lines, sha256: hash.digest("hex") } });
    });
    req.on("close", () => {
      if (!req.complete) finish({ kind: "aborted" });
    });
    req.pipe(parser);
  });
}

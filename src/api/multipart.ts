/**
 * The submit form. The file is a disk-backed Blob (`fs.openAsBlob`): undici streams
 * it part by part while sending, so a 20 MB list never sits in memory, and the same
 * Blob can be streamed again for a retry.
 */
import { openAsBlob } from "node:fs";
import { basename, extname } from "node:path";
import { FormData } from "undici";
import { UsageError } from "../errors.js";

export interface SubmitForm {
  serviceType: string;
  country: string | undefined;
  file: Blob;
  fileName: string;
}

/** Opens the upload file without reading it. Unreadable paths are a UsageError naming the path. */
export async function openUploadFile(path: string): Promise<Blob> {
  try {
    return await openAsBlob(path, { type: contentTypeFor(path) });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(
      `Cannot read the file to upload, ${path}${typeof code === "string" ? ` (${code})` : ""}. Check the path and its permissions.`,
      {
        cause: error,
      },
    );
  }
}

/** `.csv` is text/csv; anything else (the spec allows .txt) is text/plain. */
function contentTypeFor(path: string): string {
  return extname(path).toLowerCase() === ".csv" ? "text/csv" : "text/plain";
}

/** The default multipart file name: the path's base name. */
export function defaultFileName(path: string): string {
  return basename(path);
}

/**
 * Builds a new FormData in the order the spec requires: service_type, then
 * country (left out when absent), then file — the service routes on country
 * before it reads the file.
 */
export function buildSubmitForm(form: SubmitForm): FormData {
  const data = new FormData();
  data.append("service_type", form.serviceType);
  if (form.country !== undefined) data.append("country", form.country);
  data.append("file", form.file, form.fileName);
  return data;
}

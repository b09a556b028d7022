import { AtomicFile } from "../results/atomic-file.js";

/**
 * Writes `html` to `path` so that it appears whole or not at all, like every file
 * bulkcheck writes.
 * @throws DestinationExistsError when `path` exists and `force` is false.
 */
export async function writeReportFile(path: string, html: string, force: boolean): Promise<void> {
  await AtomicFile.write(path, { force }, (out) => {
    out.end(html);
  });
}

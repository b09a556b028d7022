import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * The `bulkcheck` and `bulkcheck/sandbox` entries as a Node script imports them: through
 * the package's `exports`, onto the bundle in dist/bundle (built by `npm test`).
 * scripts/test-package.mjs runs the same script from an installed tarball.
 */
const SMOKE = fileURLToPath(new URL("../../scripts/package-smoke.mjs", import.meta.url));

describe("the package's entries", () => {
  it("start a sandbox, talk to it through the client, throw typed errors and prepare a list on a worker", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [SMOKE], { encoding: "utf8" });
    expect(JSON.parse(stdout)).toEqual({
      balance: 250_000,
      wrongKey: "ApiError (auth)",
      cell: { class: "kept", identifier: "447400123456" },
      kept: 2,
      invalid: 1,
    });
  });
});

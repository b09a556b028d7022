import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runBin, tempDir } from "../helpers/cli.js";
import { finish, startHarness, submit, type Harness } from "./helpers.js";

// That the sandbox imports nothing of src/prepare/, directly or through another module, is an ESLint
// rule (eslint.config.js, sandboxOnly); these tests check that both sides still agree on the counts.

describe("the client and the sandbox on the same raw list", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** validate --require-country-code (the service's rule, as the client applies it) and the sandbox's task counts. */
  async function both(country: string, cells: readonly string[]) {
    const dir = tempDir();
    const path = join(dir, "raw.txt");
    writeFileSync(path, cells.join("\n") + "\n");
    const out = await runBin(["validate", path, "--country", country, "--require-country-code", "--json"], {
      env: { BULKCHECK_CONFIG_DIR: join(dir, "config") },
    });
    expect(out.code, out.stderr).toBe(0);
    const client = JSON.parse(out.stdout);
    h = await startHarness({ minTaskSize: 1 });
    const reply = await submit(h, { serviceType: "number_validation_batch", country, lines: cells });
    const task = await finish(h, reply.body.data.id);
    const pick = (o: Record<string, number>) => ({
      kept: o.kept ?? o.total,
      invalid_cnt: o.invalid_cnt,
      no_code_cnt: o.no_code_cnt,
      other_country_cnt: o.other_country_cnt,
      duplicate_cnt: o.duplicate_cnt,
    });
    return { client: pick(client), service: pick(task as unknown as Record<string, number>) };
  }

  it("agree on every count of a list written the service's way: digits with the calling code", async () => {
    const cells = ["447400100001", "+447400100002", "447400100001", "+12125550142", "+4915112345678", "447700900123", "07400100003"];
    const { client, service } = await both("GB", cells);
    expect(client).toEqual({ kept: 2, invalid_cnt: 1, no_code_cnt: 1, other_country_cnt: 2, duplicate_cnt: 1 });
    expect(service).toEqual(client);
  });

  it("differ where the client reads a list's own convention and the service reads only the calling code", async () => {
    const cells = [
      "4921 12345", // ambiguous: the client reads it nationally (04921 12345, no_code), the service as +49 211 2345
      "1512345 6000", // bare, valid only nationally for the client (no_code); the service reads +1 512 345 6000, a US number
      "1512345 6001",
      "0049 30 12345678", // an international prefix: the client reads +49 30 1234 5678; the service asks for "+" and calls it no_code
      "+49 30 12345679", // both keep it
    ];
    const { client, service } = await both("DE", cells);
    expect(client).toEqual({ kept: 2, invalid_cnt: 0, no_code_cnt: 3, other_country_cnt: 0, duplicate_cnt: 0 });
    expect(service).toEqual({ kept: 2, invalid_cnt: 0, no_code_cnt: 1, other_country_cnt: 2, duplicate_cnt: 0 });
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SUPPORTED_LINES } from "../../scripts/node-lines.mjs";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

describe("the supported Node.js lines", () => {
  it("start where package.json's engines do, and docs/install.md names each", () => {
    const { engines } = JSON.parse(read("package.json")) as { engines: { node: string } };
    expect(engines.node).toBe(`>=${SUPPORTED_LINES[0]}`);
    const section = /^## Node\.js versions\n([\s\S]*?)^## /m.exec(read("docs/install.md"))?.[1];
    for (const line of SUPPORTED_LINES) expect(section).toMatch(new RegExp(`\\b${line}\\.\\d+\\.\\d+\\b`));
  });
});

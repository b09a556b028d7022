import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("processIO", () => {
  it("leaves each standard stream to be created when first used (stdin alone costs a start ~3 ms)", () => {
    const io = fileURLToPath(new URL("../../dist/cli/io.js", import.meta.url));
    const script = `
      const touched = [];
      for (const name of ["stdin", "stdout", "stderr"]) {
        const descriptor = Object.getOwnPropertyDescriptor(process, name);
        Object.defineProperty(process, name, { configurable: true, get() { touched.push(name); return descriptor.get.call(process); } });
      }
      const { processIO } = await import(${JSON.stringify(io)});
      const streams = processIO();
      const before = [...touched];
      const stdin = streams.stdin;
      console.log(JSON.stringify({ before, after: touched, same: stdin === process.stdin }));`;
    const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
    expect(out).toEqual({ before: [], after: ["stdin", "stdin"], same: true });
  });
});

import { describe, expect, it } from "vitest";
import { createScrubber, sanitizeSnippet, stripQuery } from "../../src/api/redact.js";

describe("stripQuery", () => {
  it.each([
    ["https://files.example.com/r/t1.csv?X-Amz-Signature=abc&x=1", "https://files.example.com/r/t1.csv"],
    ["https://user:pw@files.example.com/r.zip#frag", "https://files.example.com/r.zip"],
    ["http://127.0.0.1:8787/results/t1", "http://127.0.0.1:8787/results/t1"],
    ["not a url?token=abc", "not a url"],
  ])("reduces %s to %s", (input, expected) => {
    expect(stripQuery(input)).toBe(expected);
  });
});

describe("createScrubber", () => {
  const scrub = createScrubber(["sk_live_abcdef123456", "ab"]);

  it("removes the key wherever it appears", () => {
    expect(scrub("bad key sk_live_abcdef123456 (sk_live_abcdef123456)")).toBe("bad key [redacted] ([redacted])");
  });

  it("removes the query string of URLs inside a text", () => {
    expect(scrub('see https://x.example/r.csv?sig=SECRET&e=1 and "http://y/z#t=1"')).toBe('see https://x.example/r.csv and "http://y/z"');
  });

  it("ignores secrets too short to mask meaningfully", () => {
    expect(scrub("about tab")).toBe("about tab");
  });
});

describe("sanitizeSnippet", () => {
  it("flattens control characters and cuts long text", () => {
    expect(sanitizeSnippet("<html>\r\n\t<body>\u0000" + "x".repeat(100), 20)).toBe("<html> <body> xxxxxx…");
  });
});

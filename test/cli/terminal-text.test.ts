import { describe, expect, it } from "vitest";
import { shortened, terminalJson, terminalText } from "../../src/ansi.js";

describe("terminalText", () => {
  it.each([
    ["plain text", "Vodafone UK", "Vodafone UK"],
    ["a window title (OSC … BEL)", "a\u001b]0;pwned\u0007b", "a\\x1b]0;pwned\\x07b"],
    ["a clear screen (CSI 2J)", "\u001b[2J", "\\x1b[2J"],
    ["a carriage return", "ok\rerror: fake", "ok\\x0derror: fake"],
    ["DEL and a C1 CSI", "\u007f\u009b31m", "\\x7f\\x9b31m"],
    ["bidi overrides and isolates", "abc\u202edef\u2066", "abc\\u202edef\\u2066"],
    ["line and paragraph separators", "a\u2028b\u2029c", "a\\u2028b\\u2029c"],
    ["right-to-left text itself", "שלום مرحبا", "שלום مرحبا"],
    ["tab and line feed (layout)", "a\tb\nc", "a\tb\nc"],
  ])("shows %s as text", (_what, text, shown) => {
    expect(terminalText(text)).toBe(shown);
  });

  it("escapes tab and line feed too for a single line, and is idempotent", () => {
    expect(terminalText("a\tb\nc", { singleLine: true })).toBe("a\\x09b\\x0ac");
    const once = terminalText("\u001b[2J\u202e", { singleLine: true });
    expect(terminalText(once, { singleLine: true })).toBe(once);
  });
});

describe("terminalJson", () => {
  it("writes what a terminal acts on as \\u escapes, the same JSON to a parser", () => {
    const value = { carrier: "a\u009b2J\u202eb\u007f", plain: "x\u001b" };
    const json = terminalJson(value);
    expect(json).toBe('{"carrier":"a\\u009b2J\\u202eb\\u007f","plain":"x\\u001b"}');
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe("shortened", () => {
  it.each([
    ["Vodafone", 8, "Vodafone"],
    ["Vodafone UK", 8, "Vodafon…"],
    ["ab\u{1f600}cd", 4, "ab…"],
  ])("cuts %j to at most %i characters, the last an ellipsis", (text, max, shown) => {
    expect(shortened(text, max)).toBe(shown);
  });
});

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import GithubSlugger from "github-slugger";
import MarkdownIt, { type Token } from "markdown-it";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/**
 * Generated from the command tree by the reference script, in its own change; until that file is committed,
 * links to it are not checked (every other link is).
 */
const GENERATED_REFERENCE = join(ROOT, "docs", "reference.md");

const markdown = new MarkdownIt();

/** The documentation people read: the README, CONTRIBUTING.md and every page under docs/. */
function documents(): string[] {
  const pages = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return ["README.md", "CONTRIBUTING.md", ...pages.sort()];
}

/** Every token of a Markdown text, inline ones (links, code spans) included. */
function tokensOf(source: string): Token[] {
  return markdown.parse(source, {}).flatMap((token) => [token, ...(token.children ?? [])]);
}

/** The targets of a text's links, as a CommonMark renderer sees them (code spans and blocks hold none). */
function linkTargets(source: string): string[] {
  return tokensOf(source)
    .filter((token) => token.type === "link_open")
    .map((token) => String(token.attrGet("href")));
}

/** The anchors GitHub gives a text's headings: the slug of each heading's text, numbered when repeated. */
function headingAnchors(source: string): Set<string> {
  const slugger = new GithubSlugger();
  const blocks = markdown.parse(source, {});
  const anchors = new Set<string>();
  blocks.forEach((token, index) => {
    if (token.type !== "heading_open") return;
    const text = (blocks[index + 1]!.children ?? [])
      .filter((child) => child.type === "text" || child.type === "code_inline")
      .map((child) => child.content)
      .join("");
    anchors.add(slugger.slug(text));
  });
  return anchors;
}

/** The links of `file` (a path under the root) that do not resolve: a missing file, or an anchor no heading of its Markdown file has. */
function brokenLinks(file: string, source: string, readTarget: (path: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(source)) {
    if (/^[a-z][a-z\d+.-]*:/i.test(target)) continue; // https:, mailto: and the like: not ours to check offline.
    const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
    const path = pathPart === "" ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(pathPart));
    if (path === GENERATED_REFERENCE && !existsSync(GENERATED_REFERENCE)) continue;
    const text = readTarget(path);
    if (text === undefined) broken.push(`${target}: no such file`);
    else if (anchor !== undefined && path.endsWith(".md") && !headingAnchors(text).has(decodeURIComponent(anchor)))
      broken.push(`${target}: no heading ${relative(ROOT, path)}#${anchor}`);
  }
  return broken;
}

/** A file's text, "" for a directory, undefined when there is nothing at the path. */
function readFromDisk(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  return statSync(path).isDirectory() ? "" : readFileSync(path, "utf8");
}

describe("links in the documentation", () => {
  it.each(documents())("every relative link and #anchor in %s resolves", (file) => {
    expect(brokenLinks(file, readFileSync(join(ROOT, file), "utf8"), readFromDisk)).toEqual([]);
  });

  it("the README's contents list links every page under docs/", () => {
    const linked = new Set(linkTargets(readFileSync(join(ROOT, "README.md"), "utf8")).map((target) => target.split("#")[0]));
    const unlinked = documents().filter((file) => file.startsWith("docs/") && !linked.has(file));
    expect(unlinked).toEqual([]);
  });

  it("reports a missing file and an anchor no heading has, and takes GitHub's slugs", () => {
    const pages: Record<string, string> = {
      [join(ROOT, "docs", "a.md")]:
        "# Runs and the ledger\n\n## Following tasks: `status` and `wait`\n\n## Node.js versions\n\n## Node.js versions\n",
    };
    const page = [
      "[ok](a.md#following-tasks-status-and-wait) [ok](a.md#nodejs-versions-1) [ok](#top) [ok](https://example.com/x#y)",
      "[missing](b.md) [no heading](a.md#the-ledger) `[in code](c.md)`",
      "",
      "# Top",
    ].join("\n");
    expect(brokenLinks("docs/page.md", page, (path) => (path === join(ROOT, "docs", "page.md") ? page : pages[path]))).toEqual([
      "b.md: no such file",
      "a.md#the-ledger: no heading docs/a.md#the-ledger",
    ]);
  });
});

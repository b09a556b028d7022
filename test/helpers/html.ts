import { parse, type DefaultTreeAdapterMap } from "parse5";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

/** A page parsed as a browser would (parse5, the WHATWG algorithm), with every parse error it met. */
export interface ParsedPage {
  errors: string[];
  elements: Element[];
}

export function parsePage(html: string): ParsedPage {
  const errors: string[] = [];
  const document = parse(html, { onParseError: (error) => errors.push(`${error.code} at line ${error.startLine}`) });
  const elements: Element[] = [];
  const walk = (node: Node) => {
    if ("tagName" in node) elements.push(node);
    if ("childNodes" in node) node.childNodes.forEach(walk);
    if ("content" in node && node.content) walk(node.content);
  };
  walk(document);
  return { errors, elements };
}

/** The text a reader sees in an element (entities decoded). */
export function textOf(node: Node): string {
  if (node.nodeName === "#text") return (node as DefaultTreeAdapterMap["textNode"]).value;
  return "childNodes" in node ? node.childNodes.map(textOf).join("") : "";
}

export function attribute(element: Element, name: string): string | undefined {
  return element.attrs.find((attr) => attr.name === name)?.value;
}

export function byId(page: ParsedPage, id: string): Element | undefined {
  return page.elements.find((element) => attribute(element, "id") === id);
}

/** A table's rows (header row first) as the text of their cells. */
export function tableRows(page: ParsedPage, id: string): string[][] {
  const table = byId(page, id);
  if (!table) throw new Error(`no table #${id}`);
  const rows: string[][] = [];
  const walk = (node: Node) => {
    if ("tagName" in node && node.tagName === "tr") {
      rows.push(node.childNodes.filter((cell) => "tagName" in cell && (cell.tagName === "td" || cell.tagName === "th")).map(textOf));
      return;
    }
    if ("childNodes" in node) node.childNodes.forEach(walk);
  };
  walk(table);
  return rows;
}

/** "1,234" → 1234. */
export function numberOf(text: string): number {
  return Number(text.replaceAll(",", ""));
}

/**
 * What a self-contained page must not have: a script, an event handler, or anything
 * fetched (a URL in any attribute or in the style sheet).
 */
export function externalReferences(page: ParsedPage, html: string): string[] {
  const found: string[] = [];
  for (const element of page.elements) {
    if (element.tagName === "script" || element.tagName === "iframe" || element.tagName === "object" || element.tagName === "embed")
      found.push(`<${element.tagName}>`);
    for (const attr of element.attrs) {
      if (/^on/i.test(attr.name)) found.push(`${element.tagName}[${attr.name}]`);
      if (["src", "href", "xlink:href", "srcset", "action", "data"].includes(attr.name))
        found.push(`${element.tagName}[${attr.name}=${attr.value}]`);
    }
  }
  if (/https?:\/\//i.test(html)) found.push("an http(s):// URL");
  if (/url\(|@import/i.test(html)) found.push("a style sheet that fetches");
  return found;
}

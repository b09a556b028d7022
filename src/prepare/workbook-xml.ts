import { SaxesParser } from "saxes";

/**
 * What a reader of one workbook part does with its XML: the elements and the text between
 * them, entities decoded. The part's own elements (those of its root element's namespace)
 * come by their local name, whatever prefix the writer chose for that namespace (`x:c` as
 * `c` under `<x:worksheet>`); other namespaces' elements keep their prefix, so that an
 * extension's `x14:workbookPr` is never taken for the workbook's own.
 */
export interface XmlHandlers {
  open(name: string, attributes: Readonly<Record<string, string>>): void;
  close(name: string): void;
  text(text: string): void;
}

/**
 * No workbook part holds this much XML without markup: a cell holds at most 32,767
 * characters. Past it the parser would be accumulating one text, comment or tag without
 * bound (a 300 MB shared string), so the part is refused instead.
 */
export const MAX_XML_WITHOUT_MARKUP = 1 << 20;
/** SpreadsheetML nests a dozen elements deep; the parser keeps one object per open element. */
const MAX_DEPTH = 100;

/**
 * A streaming XML reader for one part (saxes: well-formedness checked, the five XML entities
 * and character references decoded, nothing else). On top of saxes it refuses a DOCTYPE
 * (no workbook part has one, and a DTD is how entity bombs and external entities come in),
 * nesting past MAX_DEPTH, and MAX_XML_WITHOUT_MARKUP characters without an event, so
 * what it holds in memory stays bounded whatever the part. `refuse` makes the error for a
 * problem ("is not well-formed XML (…)"); the handlers may throw their own.
 */
export class XmlReader {
  readonly #parser = new SaxesParser({ xmlns: false, position: true });
  /** Where the parser was at the last event: what lies after it is one token still being read. */
  #markedAt = 0;
  #depth = 0;
  /** The root element's namespace prefix with its colon (`x:`), or "" for the default namespace. */
  #prefix = "";

  constructor(
    handlers: XmlHandlers,
    private readonly refuse: (problem: string) => Error,
  ) {
    const parser = this.#parser;
    parser.on("opentag", (tag) => {
      if (++this.#depth > MAX_DEPTH) throw refuse(`nests elements more than ${MAX_DEPTH} deep`);
      this.#markedAt = parser.position;
      if (this.#depth === 1) this.#prefix = tag.name.slice(0, tag.name.indexOf(":") + 1);
      handlers.open(this.#ownName(tag.name), tag.attributes);
    });
    parser.on("closetag", (tag) => {
      this.#depth--;
      this.#markedAt = parser.position;
      handlers.close(this.#ownName(tag.name));
    });
    const text = (content: string) => {
      this.#markedAt = parser.position;
      handlers.text(content);
    };
    parser.on("text", text);
    parser.on("cdata", text);
    parser.on("doctype", () => {
      throw refuse("declares a DOCTYPE, which no workbook part has (a DTD can define entities that expand without bound)");
    });
    parser.on("error", (error) => {
      throw refuse(`is not well-formed XML (${error.message})`);
    });
  }

  /** Reads the next piece of the part's text; the handlers run before it returns. */
  write(text: string): void {
    this.#parser.write(text);
    if (this.#parser.position - this.#markedAt > MAX_XML_WITHOUT_MARKUP) {
      throw this.refuse(`holds more than ${MAX_XML_WITHOUT_MARKUP / 1024 ** 2} MiB of XML without markup`);
    }
  }

  /** Ends the part; a part that stops inside an element is not well-formed. */
  close(): void {
    this.#parser.close();
  }

  /** An element's name as the handlers see it: `x:c` → `c` when the root is `x:worksheet`. */
  #ownName(name: string): string {
    return this.#prefix !== "" && name.startsWith(this.#prefix) ? name.slice(this.#prefix.length) : name;
  }
}

/** Text as Windows-1252 bytes, for the characters tests use: Latin-1 plus €, ’ and –. */
export function cp1252(text: string): Buffer {
  const beyondLatin1: Record<string, number> = { "€": 0x80, "’": 0x92, "–": 0x96 };
  return Buffer.from([...text].map((c) => beyondLatin1[c] ?? c.charCodeAt(0)));
}

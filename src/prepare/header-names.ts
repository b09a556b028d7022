/**
 * How strongly a header names a phone column: 3 for mobile words (mobile, cell,
 * msisdn, …: the services check mobiles), 2 for other phone words (phone, tel,
 * telephone, …), 1 for a bare "number"/"no", 0 otherwise or when a word says it
 * is about the number rather than the number itself (fax, ext, type, country code…).
 *
 * Words are split on punctuation, spaces and camelCase, so "Phone Number",
 * "mobile_no", "MobileNo", "TelNo" and "cellphone" all count.
 */
export function headerScore(name: string): number {
  const words = name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
  if (words.length === 0 || words.some((word) => NOT_THE_NUMBER.has(word))) return 0;
  let score = 0;
  for (const word of words) {
    const stem = PHONE_WORD.exec(word)?.[1];
    if (stem !== undefined) score = Math.max(score, MOBILE_STEMS.has(stem) ? 3 : 2);
  }
  if (score === 0 && words.length === 1 && BARE_NUMBER.has(words[0]!)) score = 1;
  return score;
}

const PHONE_WORD =
  /^(phone|mobile|mob|cell|cellular|tel|tele|telephone|telefon|telefono|teléfono|telefone|msisdn|gsm|handy|whatsapp)(?:s|no|nr|num|number|phone|phones)?$/;
const MOBILE_STEMS = new Set(["mobile", "mob", "cell", "cellular", "msisdn", "gsm", "handy", "whatsapp"]);
const BARE_NUMBER = new Set(["number", "no", "num", "nr"]);
const NOT_THE_NUMBER = new Set([
  "fax",
  "ext",
  "extension",
  "type",
  "kind",
  "country",
  "code",
  "status",
  "valid",
  "verified",
  "id",
  "count",
]);

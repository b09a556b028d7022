/** Envelope codes from the spec's error table. */
export const ApiCode = {
  OK: 0,
  UNSUPPORTED_OR_CONFLICT: 40000,
  INVALID_JSON: 40001,
  INVALID_PHONE: 40002,
  UNAUTHORIZED: 40100,
  INSUFFICIENT_BALANCE: 40200,
  UNPROCESSABLE: 42200,
  QUOTA_EXHAUSTED: 42900,
  SLOTS_OCCUPIED: 42901,
  MAINTENANCE: 50300,
  AT_CAPACITY: 50303,
  TIMEOUT: 50400,
} as const;

export type ApiCodeValue = (typeof ApiCode)[keyof typeof ApiCode];

/** The spec's meaning of each code, used in messages when the service's own text is terse. */
export const API_CODE_MEANING: Readonly<Record<number, string>> = {
  40000: "unsupported service type, or conflicting request fields",
  40001: "invalid JSON body",
  40002: "invalid phone number",
  40100: "missing or invalid API key",
  40200: "insufficient balance",
  42200: "the submitted task cannot be accepted in its current form",
  42900: "a usage quota is exhausted, or there are too many unfinished orders",
  42901: "all request slots are occupied",
  50300: "validation service under maintenance",
  50303: "service at capacity",
  50400: "the request did not finish within its timeout",
};

/**
 * bulkcheck for Node scripts: the service's API client and the local preparation of
 * phone lists. The sandbox is its own entry, `bulkcheck/sandbox`.
 */
export { createClient } from "./api/index.js";
export type { ApiClient, ClientEvent, ClientOptions, ResultDownload, SubmitTaskInput, SubmitTaskResult } from "./api/index.js";
export {
  ApiError,
  ConnectionError,
  HttpStatusError,
  ResponseFormatError,
  ResultUrlExpiredError,
  RetriesExhaustedError,
} from "./api/index.js";
export {
  AuthError,
  BulkcheckError,
  InputRejectedError,
  InsufficientBalanceError,
  InterruptedError,
  PendingError,
  ProtocolError,
  ServiceUnavailableError,
  TaskFailedError,
  UsageError,
  type ErrorDetails,
  type ErrorKind,
} from "./errors.js";
export { classifyCell, prepareList } from "./prepare/index.js";
export type { CellClass, Classification, ClassifyOptions, PrepareOptions, PrepareResult, PrepareSummary } from "./prepare/index.js";

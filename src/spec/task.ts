export type TaskStatus = "processing" | "success" | "failed";

/** Every response body: `{code, msg, data}`. */
export interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

/**
 * A task as the check and submit endpoints return it. Fields marked optional are
 * absent in the spec's shorter variant or until the task has finished.
 */
export interface Task {
  id: string;
  /** A ServiceType, or a product this version of bulkcheck does not know. */
  product: string;
  status: TaskStatus;
  country: string;
  total: number;
  created_at: string;
  submitted_lines?: number;
  invalid_cnt?: number;
  no_code_cnt?: number;
  other_country_cnt?: number;
  duplicate_cnt?: number;
  preparing?: boolean;
  success_cnt?: number;
  failure_cnt?: number;
  result_url?: string;
}

export interface Balance {
  balance_micros: number;
}

// One HTTP call to the API, with the retry policy.
//
// What may be retried depends on whether repeating the request could do
// something twice:
// - "idempotent" calls (reads, verification, stream tickets, PUT/DELETE of
//   a bot, and move submissions, which always carry a `request_id`) are
//   retried after any transient failure: a network error, a timeout, 429,
//   502, 503, 504.
// - "once" calls (create, join, leave, resign, cancel, token renewal,
//   import) are retried only when the server certainly did not act: a 429
//   or a 503 `too_many_connections` refusal, or a connection that was never
//   opened. After a failure that may have reached the server they throw.
import { LudoNetworkError, LudoProblem } from "./errors.js";
import type { Problem } from "./types/common.js";

export interface RetryPolicy {
  /** Most tries of one call, the first included (1: never retry). Default 4. */
  attempts: number;
  /** First wait after a failure that names no delay; doubles each time, with jitter. Default 200 ms. */
  backoffMs: number;
  /** Cap of that backoff. Default 5000 ms. */
  maxBackoffMs: number;
  /**
   * Longest wait the client accepts from the server (`retry_after_ms` of a
   * 429 or 503, or `Retry-After`); a longer one is thrown to the caller.
   * Default 30000 ms.
   */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  backoffMs: 200,
  maxBackoffMs: 5000,
  maxRetryAfterMs: 30_000,
};

export type Safety = "idempotent" | "once";

export interface Request {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | null | undefined>;
  /** A JSON body, or NDJSON text (exports). */
  json?: unknown;
  ndjson?: string;
  token?: string | undefined;
  headers?: Record<string, string>;
  safety: Safety;
  /** How to read a 2xx answer. */
  read: "json" | "text";
  signal?: AbortSignal | undefined;
}

export interface TransportOptions {
  baseUrl: string;
  fetch: typeof fetch;
  retry: RetryPolicy;
  /** Per try, from sending to the whole answer read. */
  timeoutMs: number;
}

/** Connection errors that prove the request never left (Node's codes; browsers give none). */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

export function url(baseUrl: string, path: string, query?: Request["query"]): string {
  const u = new URL(path, baseUrl.endsWith("/") ? baseUrl : baseUrl + "/");
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
  }
  return u.toString();
}

export async function call<T>(t: TransportOptions, req: Request): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= t.retry.attempts;
    let wait: number;
    try {
      return (await once(t, req)) as T;
    } catch (error) {
      if (last || req.signal?.aborted) throw error;
      const delay = retryDelay(t.retry, req.safety, error, attempt);
      if (delay === undefined) throw error;
      wait = delay;
    }
    await sleep(wait, req.signal);
  }
}

/** How long to wait before retrying after `error`, or undefined: do not retry. */
function retryDelay(p: RetryPolicy, safety: Safety, error: unknown, attempt: number): number | undefined {
  const backoff = Math.min(p.maxBackoffMs, p.backoffMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
  if (error instanceof LudoNetworkError) {
    return safety === "idempotent" || !error.maybeReached ? backoff : undefined;
  }
  if (!(error instanceof LudoProblem)) return undefined;
  // A refusal before any work: safe to repeat whatever the call.
  const refused = error.status === 429 || error.code === "too_many_connections";
  const transient = [502, 503, 504].includes(error.status) || error.code === "request_timeout";
  if (!refused && !(transient && safety === "idempotent")) return undefined;
  const asked = error.retry_after_ms;
  if (asked === undefined || asked === null) return backoff;
  return asked <= p.maxRetryAfterMs ? asked : undefined;
}

async function once(t: TransportOptions, req: Request): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json, application/problem+json", ...req.headers };
  if (req.token !== undefined) headers.authorization = `Bearer ${req.token}`;
  let body: string | undefined;
  if (req.ndjson !== undefined) {
    headers["content-type"] = "application/x-ndjson";
    body = req.ndjson;
  } else if (req.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(req.json);
  }

  // One signal for the caller's abort and this try's timeout.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("timeout")), t.timeoutMs);
  const onAbort = () => controller.abort(req.signal?.reason);
  req.signal?.addEventListener("abort", onAbort, { once: true });
  let sent = false;
  try {
    const init: RequestInit = { method: req.method, headers, signal: controller.signal };
    if (body !== undefined) init.body = body;
    const res = await t.fetch(url(t.baseUrl, req.path, req.query), init);
    sent = true;
    if (res.status === 204) return undefined;
    const text = await res.text();
    if (!res.ok) throw new LudoProblem(problemOf(res, text));
    return req.read === "json" ? JSON.parse(text) : text;
  } catch (error) {
    if (error instanceof LudoProblem || req.signal?.aborted) throw error;
    if (error instanceof SyntaxError) throw error;
    const code = causeCode(error);
    const timedOut = controller.signal.aborted;
    throw new LudoNetworkError(
      timedOut ? `no answer within ${t.timeoutMs} ms` : `network failure${code ? ` (${code})` : ""}`,
      { cause: error, maybeReached: sent || timedOut || !NOT_SENT.has(code ?? "") },
    );
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", onAbort);
  }
}

/** The answer's problem, or one made up for an answer that is not a problem. */
export function problemOf(res: Response, text: string): Problem {
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("json")) {
    try {
      const p = JSON.parse(text) as Partial<Problem>;
      if (typeof p.code === "string" && typeof p.status === "number") {
        // Older servers may omit `retry_after_ms`: fall back on Retry-After.
        if (p.retry_after_ms == null) {
          const header = retryAfterHeader(res);
          if (header !== undefined) p.retry_after_ms = header;
        }
        return p as Problem;
      }
    } catch {
      // Not JSON after all: described below.
    }
  }
  const problem: Problem = {
    type: "about:blank",
    title: res.statusText,
    status: res.status,
    detail: text.slice(0, 500) || `HTTP ${res.status}`,
    code: "unexpected_response",
  };
  const header = retryAfterHeader(res);
  if (header !== undefined) problem.retry_after_ms = header;
  return problem;
}

function retryAfterHeader(res: Response): number | undefined {
  const v = res.headers.get("retry-after");
  if (v === null || !/^\d+$/.test(v.trim())) return undefined;
  return Number(v) * 1000;
}

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === "string" ? cause.code : undefined;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

import type { Problem, ProblemCode, Seat } from "./types/common.js";

/**
 * A refusal from the server: an RFC 9457 problem with its stable `code`
 * (and `rule` for a rule violation, `field` for invalid input …). A refusal
 * changed nothing on the server.
 *
 * An answer that is not a problem (a proxy's 502 page, say) becomes one
 * too, with `code: "unexpected_response"`, so callers handle one class.
 */
export class LudoProblem extends Error implements Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ProblemCode | (string & {});
  declare readonly rule?: string | null;
  declare readonly field?: string | null;
  declare readonly current_version?: number | null;
  declare readonly expected_version?: number | null;
  declare readonly retry_after_ms?: number | null;
  declare readonly seat?: Seat | null;
  declare readonly to_move?: Seat[] | null;
  declare readonly open_seats?: Seat[] | null;
  declare readonly line?: number | null;
  declare readonly seq?: number | null;
  /** The problem exactly as the server sent it. */
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(`${problem.code}: ${problem.detail}`);
    this.name = "LudoProblem";
    this.problem = problem;
    // The optional members are `declare`d, so only those the server sent
    // exist on the error, as on the problem itself.
    Object.assign(this, problem);
    this.type = problem.type;
    this.title = problem.title;
    this.status = problem.status;
    this.detail = problem.detail;
    this.code = problem.code;
  }
}

/** Whether `error` is a refusal, and (with `code`) one of that code. */
export function isProblem(error: unknown, code?: ProblemCode): error is LudoProblem {
  return error instanceof LudoProblem && (code === undefined || error.code === code);
}

/**
 * The server could not be reached, or the connection broke before an
 * answer. `maybeReached` says whether the request may have arrived: when
 * it may have, a call that is not idempotent was not retried (its outcome
 * is unknown; read the game to find out).
 */
export class LudoNetworkError extends Error {
  readonly maybeReached: boolean;

  constructor(message: string, options: { cause: unknown; maybeReached: boolean }) {
    super(message, { cause: options.cause });
    this.name = "LudoNetworkError";
    this.maybeReached = options.maybeReached;
  }
}

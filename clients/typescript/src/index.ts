// The official TypeScript SDK of ludotheque. Start at `LudoClient`.
export { LudoClient } from "./client.js";
export type { CallOptions, ClientOptions, ListGamesQuery, PageQuery, SubmitOptions } from "./client.js";
export { LudoNetworkError, LudoProblem, isProblem } from "./errors.js";
export { DEFAULT_RETRY } from "./http.js";
export type { RetryPolicy } from "./http.js";
export { GameStream } from "./stream.js";
export type { FollowOptions } from "./stream.js";
export { SseParser } from "./sse.js";
export type { SseEvent } from "./sse.js";
export { KINDS } from "./types/kinds.js";
export type * from "./types/kinds.js";
export type * from "./types/common.js";
export type * from "./types/cardinal.js";
export type * from "./types/kardinal.js";
export type * from "./types/battle13.js";

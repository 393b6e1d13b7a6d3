// A Server-Sent Events parser, as the HTML standard specifies the
// `text/event-stream` format (§9.2.6): fed text as it arrives, in chunks
// cut anywhere, it returns the events completed so far.
//
// Written here rather than using `EventSource` because `EventSource`
// cannot send headers (no `Authorization`, no `Last-Event-ID` of our
// choosing) and Node 20 has none: over `fetch` the same code runs in Node
// and in browsers.

export interface SseEvent {
  /** `event:` field; "message" when the event named none. */
  event: string;
  data: string;
  /** The last event id at dispatch (ids persist until another `id:` line). */
  id: string | undefined;
}

export class SseParser {
  /** The id of the last event dispatched, what a reconnect sends as `Last-Event-ID`. */
  lastEventId: string | undefined;
  /** The last valid `retry:` value, in milliseconds. */
  retry: number | undefined;

  private buffer = "";
  // An `id:` takes effect when its event is complete: an event cut off
  // must not move the resumption point past itself.
  private idBuffer: string | undefined;
  private data: string[] = [];
  private event = "";
  private started = false;

  constructor(lastEventId?: string) {
    this.lastEventId = lastEventId;
    this.idBuffer = lastEventId;
  }

  /** Feeds decoded text; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    this.buffer += chunk;
    const events: SseEvent[] = [];
    // Lines end in CRLF, LF or CR. A CR at the very end may be the first
    // half of a CRLF, so it waits for the next chunk.
    const lineEnd = /\r\n|\n|\r(?!$)/g;
    let start = 0;
    for (let m = lineEnd.exec(this.buffer); m !== null; m = lineEnd.exec(this.buffer)) {
      const event = this.line(this.buffer.slice(start, m.index));
      if (event) events.push(event);
      start = m.index + m[0].length;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /**
   * The stream ended: a CR held back as half a CRLF was a line end after
   * all. An event cut off by the end is discarded, as the standard says:
   * a reconnect asks for it again, after `lastEventId`.
   */
  end(): SseEvent[] {
    const events = this.buffer.endsWith("\r") ? this.push("\n") : [];
    this.buffer = "";
    this.idBuffer = this.lastEventId;
    this.data = [];
    this.event = "";
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined; // a comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.idBuffer = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default: // unknown fields are ignored
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    this.lastEventId = this.idBuffer;
    const event = this.event || "message";
    const data = this.data.join("\n");
    const had = this.data.length > 0;
    this.data = [];
    this.event = "";
    return had ? { event, data, id: this.lastEventId } : undefined;
  }
}

/** Reads a server-sent event stream for the tests: each event (or comment line) in turn. */
export interface StreamItem {
  readonly event?: string;
  readonly data?: string;
  readonly comment?: string;
}

export interface EventStreamReader {
  readonly status: number;
  readonly contentType: string | null;
  /** The next event or comment; rejects when the stream ends first. */
  next(): Promise<StreamItem>;
  /** The next `event: status`, its data parsed. */
  nextStatus(): Promise<{ state: string; detail: string | null; statuses: unknown[] }>;
  close(): void;
}

export async function openEventStream(
  url: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<EventStreamReader> {
  const abort = new AbortController();
  const response = await fetch(url, {
    signal: abort.signal,
    headers: { accept: "text/event-stream", ...headers },
  });
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const next = async (): Promise<StreamItem> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const item = parseBlock(block);
        if (item) return item;
        continue;
      }
      const chunk = await reader?.read();
      if (!chunk || chunk.done) throw new Error("the stream ended");
      buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    next,
    nextStatus: async () => {
      for (;;) {
        const item = await next();
        if (item.event === "status" && item.data) return JSON.parse(item.data);
      }
    },
    close: () => abort.abort(),
  };
}

/** One block of lines; null for a block with neither data nor a comment (`retry:` alone). */
function parseBlock(block: string): StreamItem | null {
  const lines = block.split("\n");
  if (lines.every((line) => line.startsWith(":"))) return { comment: lines.join("\n").slice(1).trim() };
  const event = lines.find((line) => line.startsWith("event: "))?.slice(7);
  const data = lines
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice(6))
    .join("\n");
  if (!data) return null;
  return { ...(event ? { event } : {}), data };
}

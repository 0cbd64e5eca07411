// Reads an NDJSON (SAF) response body as it arrives: each chunk the network
// delivers is split into its complete lines at once, so results can be shown
// while the server is still scanning. A line cut by a chunk boundary waits
// for the rest of it.

/** One parsed SAF line: `{"cond":...}`, `{"obj":...}` or the `{}` keep-alive. */
export interface SafLine {
  cond?: string;
  msg?: string;
  obj?: Record<string, unknown>;
}

/** compat.md keeps every line under 64 KiB; a longer one means the body is not what we asked for. */
const LINE_CHARS_MAX = 64 * 1024;

/** Yields the lines of each chunk together, so that a caller can render a chunk in one DOM update. */
export async function* safBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<SafLine[]> {
  const reader = body.getReader();
  // stream: true keeps a UTF-8 sequence cut by a chunk boundary for the next chunk.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let rest = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const parts = (rest + decoder.decode(value, { stream: true })).split('\n');
      rest = parts.pop() ?? '';
      if (rest.length > LINE_CHARS_MAX) throw new Error(`a response line is longer than ${LINE_CHARS_MAX} characters`);
      const lines = parts.filter((p) => p !== '').map((p) => JSON.parse(p) as SafLine);
      if (lines.length > 0) yield lines;
    }
  } finally {
    reader.releaseLock();
  }
  rest += decoder.decode();
  if (rest.trim() !== '') throw new Error('the response ended in the middle of a line');
}

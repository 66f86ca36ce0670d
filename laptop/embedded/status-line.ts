/** Where a status line goes: a terminal or any other writable text stream. */
export interface LineSink {
  write(text: string): unknown;
}

/**
 * One line rewritten in place (`\r`), padded with spaces over whatever the previous, longer version
 * left behind, so a line that shortens shows no stale text.
 */
export function createStatusLine(out: LineSink): (text: string) => void {
  let previousLength = 0;
  return (text) => {
    const padding = " ".repeat(Math.max(0, previousLength - text.length));
    out.write(`\r${text}${padding}`);
    previousLength = text.length;
  };
}

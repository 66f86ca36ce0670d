/** Where a status line goes: a terminal or any other writable text stream. */
export interface LineSink {
  write(text: string): unknown;
  /** True on a terminal; a pipe or a file has it unset. */
  readonly isTTY?: boolean;
}

/**
 * On a terminal, one line rewritten in place (`\r`), padded with spaces over whatever the previous,
 * longer version left behind, so a line that shortens shows no stale text. Anywhere else (a pipe, a
 * file), a plain line for each change, and nothing when the text is what it was.
 */
export function createStatusLine(out: LineSink): (text: string) => void {
  let previous = "";
  if (!out.isTTY) {
    return (text) => {
      if (text !== previous) out.write(`${text}\n`);
      previous = text;
    };
  }
  return (text) => {
    const padding = " ".repeat(Math.max(0, previous.length - text.length));
    out.write(`\r${text}${padding}`);
    previous = text;
  };
}

/** Ends a live line (a terminal's) so that what follows starts on a line of its own. */
export function endStatusLine(out: LineSink): void {
  if (out.isTTY) out.write("\n");
}

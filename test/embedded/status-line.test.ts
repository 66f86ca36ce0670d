import { describe, expect, it } from "vitest";
import { createStatusLine } from "../../laptop/embedded/status-line.js";

/** What a terminal shows after `written`: `\r` returns to column 0 and characters overwrite. */
function screen(written: string): string {
  let line: string[] = [];
  let column = 0;
  for (const char of written) {
    if (char === "\r") column = 0;
    else line[column++] = char;
  }
  line = line.map((c) => c ?? " ");
  return line.join("").trimEnd();
}

describe("status line", () => {
  it("leaves no stale text behind when the line shortens", () => {
    let written = "";
    const show = createStatusLine({ write: (text: string) => (written += text), isTTY: true });
    show("Processing 3 · Processed 19 · Error 1");
    show("Processed 22 · Error 1");
    expect(screen(written)).toBe("Processed 22 · Error 1");
    show("Processed 23 · Error 1 · dead-lettered 1");
    expect(screen(written)).toBe("Processed 23 · Error 1 · dead-lettered 1");
  });

  it("F27: writes a plain line per change when it is not a terminal, never a carriage return", () => {
    let written = "";
    const show = createStatusLine({ write: (text: string) => (written += text) });
    show("Pending 2");
    show("Pending 2");
    show("Processed 2");
    expect(written).toBe("Pending 2\nProcessed 2\n");
  });
});

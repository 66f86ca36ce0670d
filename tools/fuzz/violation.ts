/** A broken property: the fuzzer's finding, with what was expected and what happened instead. */
export class Violation extends Error {
  override readonly name = "Violation";
}

/** Throws a Violation with `message()` unless `condition` holds. */
export function expectThat(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new Violation(message());
}

/** A short, printable form of any value, for violation messages. */
export function shown(value: unknown, max = 300): string {
  let text: string;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}... (${text.length} characters)` : text;
}

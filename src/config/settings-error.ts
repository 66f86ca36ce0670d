/** What every settings loader reads, and the error naming each bad setting it found. */
export class SettingsError extends Error {
  override readonly name = "SettingsError";
  constructor(readonly problems: readonly string[]) {
    super(`invalid settings:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

export type Environment = Readonly<Record<string, string | undefined>>;

/** An HTTP answer as the API decides it; each host writes it its own way. */
export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

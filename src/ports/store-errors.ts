/** A conditional write lost: the record changed since it was read (stale ETag). Nothing was written. */
export class PreconditionFailedError extends Error {
  override readonly name = "PreconditionFailedError";
  readonly kind = "PreconditionFailed" as const;
  constructor(
    readonly key: string,
    readonly expectedEtag: string,
  ) {
    super(`precondition failed for ${key}: the record no longer has ETag ${expectedEtag}`);
  }
}

/** The record to update does not exist. Nothing was written. */
export class NotFoundError extends Error {
  override readonly name = "NotFoundError";
  readonly kind = "NotFound" as const;
  constructor(readonly key: string) {
    super(`no record for ${key}`);
  }
}

/** A continuation token that this store did not issue, or issued for a different query. */
export class InvalidContinuationTokenError extends Error {
  override readonly name = "InvalidContinuationTokenError";
  readonly kind = "InvalidContinuationToken" as const;
  constructor(readonly reason: string) {
    super(`invalid continuation token: ${reason}`);
  }
}

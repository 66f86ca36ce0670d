/** Settling or renewing with a lock token the queue no longer holds: expired, settled, or never issued. */
export class LockLostError extends Error {
  override readonly name = "LockLostError";
}

/** An operation Service Bus refuses, or that this broker does not implement. */
export class OperationNotAllowedError extends Error {
  override readonly name = "OperationNotAllowedError";
}

export const CONDITIONS = {
  lockLost: "com.microsoft:message-lock-lost",
  notFound: "amqp:not-found",
  notAllowed: "amqp:not-allowed",
  notImplemented: "amqp:not-implemented",
  internalError: "amqp:internal-error",
} as const;

/** How a failed operation is reported: the AMQP error condition, and the management status code. */
export function failureOf(error: unknown): { condition: string; statusCode: number; description: string } {
  const description = error instanceof Error ? error.message : String(error);
  if (error instanceof LockLostError) return { condition: CONDITIONS.lockLost, statusCode: 410, description };
  if (error instanceof OperationNotAllowedError) {
    return { condition: CONDITIONS.notAllowed, statusCode: 400, description };
  }
  return { condition: CONDITIONS.internalError, statusCode: 500, description };
}

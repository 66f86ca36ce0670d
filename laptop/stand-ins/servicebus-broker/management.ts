import type { QueueEntity, SubQueueKind } from "./entity.js";
import { CONDITIONS, failureOf, OperationNotAllowedError } from "./errors.js";
import { type AmqpMessage, encodeMessage, lockTokenOfUuid, optionalString, outgoingMessage } from "./wire.js";

/** A response to a request-response node: its status in application properties, and a body. */
export interface Reply {
  readonly applicationProperties: Record<string, unknown>;
  readonly body: unknown;
}

interface Status {
  readonly statusCode: number;
  readonly description: string;
  readonly errorCondition?: string;
  readonly body?: unknown;
}

const OK: Status = { statusCode: 200, description: "OK" };

/** `$cbs`: every token is accepted; the broker does not authenticate. */
export function answerCbs(request: AmqpMessage): Reply {
  const operation = request.application_properties?.operation;
  const status =
    operation === "put-token"
      ? { statusCode: 202, description: "Accepted" }
      : failure(400, CONDITIONS.notImplemented, `unknown $cbs operation ${String(operation)}`);
  // The CBS client reads kebab-case status keys; the management client (peek above all) camelCase ones.
  return reply(status, "status-code", "status-description", "error-condition");
}

/** `<entity>/$management`: the request-response operations the SDK's receivers use. */
export function answerManagement(entity: QueueEntity, kind: SubQueueKind, request: AmqpMessage): Reply {
  return reply(managementStatus(entity, kind, request), "statusCode", "statusDescription", "errorCondition");
}

function managementStatus(entity: QueueEntity, kind: SubQueueKind, request: AmqpMessage): Status {
  const operation = request.application_properties?.operation;
  const body = (request.body ?? {}) as Record<string, unknown>;
  try {
    switch (operation) {
      case "com.microsoft:renew-lock": {
        const expirations = lockTokens(body).map((token) => new Date(entity.renewLock(kind, token)));
        return { ...OK, body: { expirations } };
      }
      case "com.microsoft:peek-message":
        return peek(entity, kind, body);
      case "com.microsoft:update-disposition":
        for (const token of lockTokens(body)) updateDisposition(entity, kind, token, body);
        return OK;
      default:
        return failure(501, CONDITIONS.notImplemented, `operation ${String(operation)} is not supported`);
    }
  } catch (error) {
    const { statusCode, condition, description } = failureOf(error);
    return failure(statusCode, condition, description);
  }
}

function peek(entity: QueueEntity, kind: SubQueueKind, body: Record<string, unknown>): Status {
  const from = Number(body["from-sequence-number"] ?? 0);
  const count = Number(body["message-count"] ?? 1);
  const source = kind === "deadLetter" ? entity.name : undefined;
  const messages = entity
    .peek(kind, from, count)
    .map((stored) => ({ message: encodeMessage(outgoingMessage(stored, undefined, source)) }));
  if (messages.length === 0) return { statusCode: 204, description: "No messages" };
  return { ...OK, body: { messages } };
}

function updateDisposition(
  entity: QueueEntity,
  kind: SubQueueKind,
  token: string,
  body: Record<string, unknown>,
): void {
  const properties = (body["properties-to-modify"] ?? {}) as Record<string, unknown>;
  const status = body["disposition-status"];
  if (status === "completed") {
    entity.complete(kind, token);
  } else if (status === "abandoned") {
    entity.abandon(kind, token, properties);
  } else if (status === "suspended") {
    const reason = optionalString(body["deadletter-reason"]);
    const description = optionalString(body["deadletter-description"]);
    entity.deadLetter(kind, token, { reason, description }, properties);
  } else {
    throw new OperationNotAllowedError(`disposition ${String(status)} is not supported`);
  }
}

function lockTokens(body: Record<string, unknown>): string[] {
  const tokens = body["lock-tokens"];
  if (!Array.isArray(tokens)) throw new OperationNotAllowedError("lock-tokens is missing");
  return tokens.map(lockTokenOfUuid);
}

function failure(statusCode: number, errorCondition: string, description: string): Status {
  return { statusCode, errorCondition, description };
}

function reply(status: Status, codeKey: string, descriptionKey: string, conditionKey: string): Reply {
  const applicationProperties: Record<string, unknown> = {
    [codeKey]: status.statusCode,
    [descriptionKey]: status.description,
  };
  if (status.errorCondition !== undefined) applicationProperties[conditionKey] = status.errorCondition;
  return { applicationProperties, body: status.body ?? null };
}

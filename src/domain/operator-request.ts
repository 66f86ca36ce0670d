import { z } from "zod";
import type { Result } from "./result.js";
import { text, type ValidationError, validate } from "./validation.js";

/** Who asks for an operator command and why: recorded on the order's record with the command. */
export const operatorRequestSchema = z.strictObject({ operator: text(1, 128), reason: text(1, 1_000) });
export type OperatorRequest = z.infer<typeof operatorRequestSchema>;

/** Validates the body of an operator command (already parsed from JSON, or the raw text when it was not JSON). */
export function parseOperatorRequest(input: unknown): Result<OperatorRequest, ValidationError> {
  return validate("operator command", operatorRequestSchema, input);
}

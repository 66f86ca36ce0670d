import { describe, expect, it } from "vitest";
import { DATA_CLASSES, ORDER_FIELD_CLASSES } from "../../src/domain/data-classification.js";
import { orderMessageSchema } from "../../src/domain/order.js";
import {
  AGENT_PAYLOAD_FIELD_CLASSES,
  ORDER_STEPS,
  STEP_REFERENCE_CLASSES,
  stepPayload,
} from "../../src/domain/partner-operations.js";
import { sampleOrder } from "../support/records.js";

describe("the data classification", () => {
  it("classes every field of the order message", () => {
    expect(Object.keys(ORDER_FIELD_CLASSES).sort()).toEqual(Object.keys(orderMessageSchema.shape).sort());
  });

  it("classes every field any step's Agent payload carries, and every step's reference", () => {
    const fields = ORDER_STEPS.flatMap((step) => Object.keys(stepPayload(sampleOrder(), step)));
    for (const field of new Set([...fields, "reference"])) {
      expect(DATA_CLASSES, field).toContain(AGENT_PAYLOAD_FIELD_CLASSES[field]);
    }
    expect(Object.keys(STEP_REFERENCE_CLASSES).sort()).toEqual([...ORDER_STEPS].sort());
  });
});

export const PROCESS_STATES = [
  "Pending",
  "Processing",
  "Processed",
  "Error",
  "Compensating",
  "Compensated",
  "CompensationFailed",
] as const;
export type ProcessState = (typeof PROCESS_STATES)[number];

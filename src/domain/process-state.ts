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

export function isProcessState(value: string): value is ProcessState {
  return (PROCESS_STATES as readonly string[]).includes(value);
}

import type { StatusMessage } from "../domain/status-message.js";

/** Sends status messages to the submitting application's own queue (`replyTo`). */
export interface StatusNotifier {
  notify(replyTo: string, message: StatusMessage): Promise<void>;
}

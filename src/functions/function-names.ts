/** The Functions app's function names, as the host lists them and the infrastructure refers to them. */
export const FUNCTION_NAMES = {
  submitOrder: "submitOrder",
  starter: "starter",
  supervisor: "supervisor",
  retention: "retention",
  agentWorker: "agentWorker",
  agentReplies: "agentReplies",
  postOrder: "postOrder",
  getOrder: "getOrder",
  listOrders: "listOrders",
  getStats: "getStats",
  dashboard: "dashboard",
  getOrderHistory: "getOrderHistory",
  resubmitOrder: "resubmitOrder",
  compensateOrder: "compensateOrder",
} as const;

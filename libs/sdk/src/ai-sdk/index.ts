// @countersign/sdk/ai-sdk: Countersign approvals for agents built with the AI SDK (`ai` 6, 6.0.202 or later).
export {
  approvalResponses,
  countersignTools,
  type ApprovalResponsesOptions,
  type CountersignApprovals,
  type CountersignToolsOptions,
} from './countersign-tools';

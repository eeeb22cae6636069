// @countersign/sdk/openai-agents: Countersign approvals for agents built with the OpenAI Agents SDK (@openai/agents).
export {
  CountersignAgents,
  type CountersignAgentsOptions,
  type CountersignRunOptions,
  type CountersignRunOutcome,
  type CountersignToolOptions,
  type ParkedApproval,
  type ResumeOptions,
} from './countersign-agents';
export {
  FileParkedRunStore,
  MemoryParkedRunStore,
  ParkedRunSchema,
  type ParkedRun,
  type ParkedRunStore,
} from './parked-run-store';

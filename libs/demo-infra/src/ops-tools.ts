// The demo's ops tools over the simulated infrastructure: built into the agent worker (the tests and benchmarks use
// them in-process) and served over MCP by apps/ops-mcp-server (what the demo and the shipped config use). Their tiers
// here are what the worker applies to the built-in ones: reads `auto`, changes `confirm`, destruction `manual_only`.
// Tools that change something preview the change for approvers, reading the simulated infrastructure only (served
// over MCP, the tools have config/agents.json's `previews` instead, which read get_service_status the same way).
// scale_service declares a precondition (the replica count): what the approval is for.
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '@countersign/authorization';
import type { InfraStore } from './infra-store';

export interface OpsToolOptions {
  restartMs: number;
  maxReplicas: number;
}

/**
 * The options' settings, one schema each for every place that sets them (the worker's agents config, the ops MCP
 * server's environment): `number` is how that place reads a number (`z.number()`, or `z.coerce.number()` from text).
 */
export const opsToolSettings = {
  restartMs: <N extends z.ZodNumber | z.ZodCoercedNumber>(number: N) =>
    number
      .int()
      .min(0)
      .max(600_000)
      .default(0)
      .describe('Milliseconds a restart takes (the service shows `restarting` meanwhile).'),
  maxReplicas: <N extends z.ZodNumber | z.ZodCoercedNumber>(number: N) =>
    number
      .int()
      .min(1)
      .max(1_000)
      .default(20)
      .describe("The upper bound of `scale_service`'s replicas (part of the tool's JSON schema)."),
};

// Strict schemas: an argument the tool does not know is refused rather than silently dropped,
// so what an approver sees is all there is.
const serviceArgs = z
  .object({ service: z.string().min(1).max(64).describe('Service name, e.g. "api"') })
  .strict();

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
const restartsSoFar = (n: number) => (n === 0 ? 'never restarted' : `restarted ${plural(n, 'time')} so far`);

export function opsTools(infra: InfraStore, options: OpsToolOptions): ToolDefinition[] {
  const tools = [
    defineTool({
      name: 'get_service_status',
      description: 'Status, replicas and restart count of one service.',
      args: serviceArgs,
      tier: 'auto',
      handler: (args) => infra.service(args.service),
    }),
    defineTool({
      name: 'list_services',
      description: 'Every service with its status.',
      args: z.object({}).strict(),
      tier: 'auto',
      handler: async () => (await infra.view()).services,
    }),
    defineTool({
      name: 'restart_service',
      description: 'Restarts a service (rolling restart of all replicas).',
      args: serviceArgs,
      tier: 'confirm',
      handler: (args) => infra.restart(args.service, options.restartMs),
      preview: async (args) => {
        const s = await infra.service(args.service);
        return `${s.name} (${s.status}, ${plural(s.replicas, 'replica')}, ${restartsSoFar(s.restarts)})`;
      },
    }),
    defineTool({
      name: 'scale_service',
      description: 'Sets the number of replicas of a service.',
      args: z
        .object({
          service: serviceArgs.shape.service,
          replicas: z.number().int().min(0).max(options.maxReplicas),
        })
        .strict(),
      tier: 'confirm',
      handler: (args) => infra.scale(args.service, args.replicas),
      preview: async (args) => {
        const s = await infra.service(args.service);
        return `${s.name}: ${s.replicas} → ${plural(args.replicas, 'replica')}`;
      },
      // The approval is for the replica count the approver saw: scaled by someone else meanwhile, it is asked again.
      precondition: {
        check: async (args) => ({ replicas: await infra.replicasOf(args.service) }),
      },
    }),
    defineTool({
      name: 'delete_volume',
      description: 'Deletes a storage volume and all its data.',
      args: z.object({ volume: z.string().min(1).max(64) }).strict(),
      tier: 'manual_only',
      handler: async (args) => ({ deleted: await infra.deleteVolume(args.volume) }),
      preview: async (args) => {
        const sizeGb = await infra.volumeSize(args.volume);
        return sizeGb === undefined
          ? `${args.volume}: no such volume`
          : `${args.volume}: ${sizeGb} GB and all its data`;
      },
    }),
  ];
  return tools as ToolDefinition[];
}

import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Tier } from '@countersign/contracts';
import { canonicalJson } from './fingerprint';
import type { ToolDefinition } from './tool';

export interface RegisteredTool {
  definition: ToolDefinition;
  tier: Tier;
  /** JSON schema of the arguments, as shown to the model. */
  jsonSchema: Record<string, unknown>;
  /** sha256 of name, JSON schema and tier: changes when a deploy changes the tool. */
  definitionHash: string;
}

/** The tools an agent may call. Names are unique. */
export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();

  constructor(tools: ToolDefinition[] = []) {
    for (const tool of tools) this.register(tool);
  }

  register(definition: ToolDefinition): this {
    if (this.tools.has(definition.name)) throw new Error(`tool "${definition.name}" is already registered`);
    const tier = definition.tier ?? 'auto';
    // The model writes the input side of the schema: a field with a default is optional to it, and a
    // transform is described by what it accepts (zod's default, `output`, would reject transforms).
    const jsonSchema = z.toJSONSchema(definition.args, { io: 'input' }) as Record<string, unknown>;
    const definitionHash = createHash('sha256')
      .update(canonicalJson({ name: definition.name, tier, schema: jsonSchema }))
      .digest('hex');
    this.tools.set(definition.name, { definition, tier, jsonSchema, definitionHash });
    return this;
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Tool declarations for a model (OpenAI function-calling shape). */
  toModelTools(): { name: string; description: string; parameters: Record<string, unknown> }[] {
    return [...this.tools.values()].map((t) => ({
      name: t.definition.name,
      description: t.definition.description,
      parameters: t.jsonSchema,
    }));
  }
}

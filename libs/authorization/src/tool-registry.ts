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
  /** sha256 of name, JSON schema, tier and what the source advertised: changes when a deploy or a source changes the tool. */
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
    const jsonSchema =
      definition.inputSchema ?? (z.toJSONSchema(definition.args, { io: 'input' }) as Record<string, unknown>);
    // `advertised` only when given: the hashes of tools declared in code stay what they were.
    const hashed = { name: definition.name, tier, schema: jsonSchema };
    const definitionHash = createHash('sha256')
      .update(
        canonicalJson(definition.advertised ? { ...hashed, advertised: definition.advertised } : hashed),
      )
      .digest('hex');
    this.tools.set(definition.name, { definition, tier, jsonSchema, definitionHash });
    return this;
  }

  /**
   * Removes a tool, e.g. one its provider no longer offers; true when it was registered. A call of it that waits for
   * a decision is refused as unknown when it resumes, and a re-registered tool with another definition is asked about
   * again (its definition hash differs).
   */
  unregister(name: string): boolean {
    return this.tools.delete(name);
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

// A preview declared in config for a tool that has none of its own (an MCP server's tool, an HTTP tool): a template
// over the call's arguments, `restart {service} to {replicas} replicas`, or, for an MCP server's tool, a read-only
// call of another of its tools whose answer the template reads too (`{result.replicas}`). It becomes the tool's
// `preview`, so approvers see it exactly where a built-in tool's preview shows (previewCall bounds it in time and
// length, and a preview that fails shows none).
import { z } from 'zod';

const PLACEHOLDER = /\{([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\}/g;
const ONE_PLACEHOLDER = /^\{([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\}$/;

export const PreviewTemplateSchema = z
  .string()
  .min(1)
  .max(500)
  .refine((template) => [...template.matchAll(PLACEHOLDER)].length > 0, {
    message: 'must name at least one argument as a {placeholder}, e.g. "restart {service}"',
  });

/** A read-only call of one of an MCP server's `auto` tools, its arguments templates over the governed call's. */
export const McpReadCallSchema = z
  .object({
    tool: z.string().min(1).max(128).describe("One of the server's own tools, whose tier is `auto`."),
    args: z
      .record(z.string(), z.string().max(500))
      .default({})
      .describe('Its arguments: templates over the call\'s (`"{service}"` passes the value as it is).'),
  })
  .strict();
export type McpReadCall = z.infer<typeof McpReadCallSchema>;

/** An MCP server's preview: a template, or a read-only call of one of the server's `auto` tools and a template. */
export const McpPreviewSchema = z.union([
  PreviewTemplateSchema,
  z
    .object({
      call: McpReadCallSchema,
      text: PreviewTemplateSchema.describe(
        "The preview: a template over the call's arguments and the read call's answer as `{result…}` (its JSON).",
      ),
    })
    .strict(),
]);
export type McpPreview = z.infer<typeof McpPreviewSchema>;

function valueAt(scope: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (at, key) =>
        at && typeof at === 'object' && Object.hasOwn(at, key)
          ? (at as Record<string, unknown>)[key]
          : undefined,
      scope,
    );
}

/**
 * The preview function of a template: each `{name}` (or `{a.b}` for a nested argument) becomes the argument's value,
 * strings as they are and anything else as compact JSON; an argument the call leaves out shows as `?`.
 */
export function templatePreview(template: string): (args: unknown) => string {
  return (args) =>
    template.replace(PLACEHOLDER, (_, path: string) => {
      const value = valueAt(args, path);
      if (value === undefined) return '?';
      return typeof value === 'string' ? value : JSON.stringify(value);
    });
}

/** The read call's arguments: `"{name}"` alone passes the value as it is (a number stays a number), else a template. */
export function templateArgs(templates: Record<string, string>, args: unknown): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(templates).map(([key, template]) => {
      const whole = ONE_PLACEHOLDER.exec(template);
      return [key, whole ? valueAt(args, whole[1]) : templatePreview(template)(args)];
    }),
  );
}

/** The read call's answer as the template reads it: its JSON, or the text itself. */
export function resultScope(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

// Checks an approver's edited arguments against the tool's JSON schema (from the tool catalog) before they become a new
// revision of the request. The agent worker checks them again with the tool's own schema and policy before anything
// runs: this check only keeps a typo from reaching the other approvers.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import type { ToolCatalogEntry } from '@countersign/contracts';

/** An edit that cannot be accepted; `message` names the field and is safe to show. */
export class InvalidEditError extends Error {
  /** The audit `reason` and the HTTP answer's `error`. */
  readonly reason: string = 'invalid_edit';

  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

/** Edited arguments no routing rule (nor the default group) takes: nobody could decide them, so they are refused. */
export class UnroutableEditError extends InvalidEditError {
  override readonly reason = 'unroutable_edit';

  constructor(args: Record<string, unknown>) {
    super(
      `args: no routing rule or default group takes the call with these arguments (${JSON.stringify(args)}), so nobody ` +
        'could decide it (no approver route); approve or deny the call as it is, or edit it differently',
    );
  }
}

export class EditedArgsCheck {
  // strict: false lets through keywords zod writes that Ajv does not know; a schema it cannot compile refuses edits.
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false });
  /** By definition hash: a definition never changes under its hash. */
  private readonly compiled = new Map<string, ValidateFunction | Error>();

  /** Throws InvalidEditError naming every field that does not fit (or why the schema cannot be used). */
  assertValid(
    definitionHash: string,
    tool: ToolCatalogEntry | undefined,
    args: Record<string, unknown>,
  ): void {
    if (!tool)
      throw new InvalidEditError(
        'args: this tool never described its arguments to the approval service, so an edit cannot be checked; ' +
          'approve or deny the call as it is',
      );
    const validate = this.validator(definitionHash, tool);
    if (validate instanceof Error)
      throw new InvalidEditError(`args: the tool's argument schema cannot be used (${validate.message})`);
    if (validate(args)) return;
    const problems = (validate.errors ?? []).map((e) => {
      const extra = (e.params as { additionalProperty?: string }).additionalProperty;
      const path = `args${e.instancePath.replace(/\//g, '.')}${extra ? `.${extra}` : ''}`;
      return `${path}: ${extra ? 'is not an argument of this tool' : e.message}`;
    });
    throw new InvalidEditError(problems.join('; ') || 'args: do not match the tool’s schema');
  }

  private validator(hash: string, tool: ToolCatalogEntry): ValidateFunction | Error {
    let found = this.compiled.get(hash);
    if (!found) {
      try {
        // $schema is left out: Ajv2020 is the dialect zod writes, and an unknown meta-schema must not refuse it.
        const { $schema: _dialect, ...schema } = tool.argsSchema;
        found = this.ajv.compile(schema);
      } catch (error) {
        found = error instanceof Error ? error : new Error(String(error));
      }
      this.compiled.set(hash, found);
    }
    return found;
  }
}

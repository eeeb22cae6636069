import { z } from 'zod';
import type { ToolCatalogEntry } from '@countersign/contracts';
import { EditedArgsCheck, InvalidEditError } from './edited-args';

const scale: ToolCatalogEntry = {
  name: 'scale_service',
  description: 'Sets the number of replicas of a service.',
  tier: 'confirm',
  // As the worker writes it: the model's side of the zod schema.
  argsSchema: z.toJSONSchema(
    z.object({ service: z.string().min(1).max(64), replicas: z.number().int().min(0).max(20) }).strict(),
    { io: 'input' },
  ) as Record<string, unknown>,
};

describe('EditedArgsCheck', () => {
  const sut = new EditedArgsCheck();

  it('accepts arguments that fit the tool’s schema', () => {
    expect(() => sut.assertValid('h1', scale, { service: 'payments', replicas: 4 })).not.toThrow();
  });

  it.each([
    [{ service: 'payments', replicas: 21 }, 'args.replicas: must be <= 20'],
    [{ service: 'payments', replicas: 2.5 }, 'args.replicas: must be integer'],
    [{ service: 'payments' }, "args: must have required property 'replicas'"],
    [{ service: 'payments', replicas: 2, force: true }, 'args.force: is not an argument of this tool'],
    [{ service: '', replicas: 2 }, 'args.service: must NOT have fewer than 1 characters'],
  ])('refuses %j naming the field', (args, message) => {
    expect(() => sut.assertValid('h1', scale, args)).toThrow(new InvalidEditError(message));
  });

  it('refuses any edit of a tool whose schema is unknown or unusable', () => {
    expect(() => sut.assertValid('h2', undefined, { service: 'x' })).toThrow(/cannot be checked/);
    const broken = { ...scale, argsSchema: { type: 'object', properties: { a: { type: 'no-such-type' } } } };
    expect(() => sut.assertValid('h3', broken, { a: 1 })).toThrow(/schema cannot be used/);
  });
});

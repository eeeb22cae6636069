import { PreviewTemplateSchema, resultScope, templateArgs, templatePreview } from './preview-template';

describe('templatePreview', () => {
  it('fills each placeholder from the arguments: strings as they are, the rest as JSON, nested by dots', () => {
    const preview = templatePreview('restart {service} to {replicas} ({opts.mode}, tags {tags})');
    expect(preview({ service: 'web', replicas: 3, opts: { mode: 'rolling' }, tags: ['a'] })).toBe(
      'restart web to 3 (rolling, tags ["a"])',
    );
  });

  it('shows an argument the call leaves out as ?, and never reads inherited properties', () => {
    expect(templatePreview('{service} {constructor} {a.toString}')({ a: {} })).toBe('? ? ?');
  });

  it('is refused in config without a placeholder, with a message naming what to write', () => {
    const parsed = PreviewTemplateSchema.safeParse('restart it');
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0].message).toContain('{placeholder}');
  });
});

describe('templateArgs and resultScope (a preview that reads first)', () => {
  it('passes "{name}" as the value itself and fills other templates', () => {
    expect(
      templateArgs(
        { service: '{service}', n: '{replicas}', label: 'svc-{service}' },
        { service: 'web', replicas: 3 },
      ),
    ).toEqual({
      service: 'web',
      n: 3,
      label: 'svc-web',
    });
  });

  it('reads a JSON answer as an object and any other answer as its text', () => {
    expect(
      templatePreview('{service}: {result.replicas} → {replicas}')({
        service: 'web',
        replicas: 6,
        result: resultScope('{"replicas":2}'),
      }),
    ).toBe('web: 2 → 6');
    expect(resultScope('not json')).toBe('not json');
  });
});

import { parseArguments } from './openai-model';
import { ScriptedModel } from './scripted-model';

const tools = [{ name: 'list_services', description: '', parameters: {} }];

describe('parseArguments', () => {
  it.each([
    ['{"service":"api"}', { service: 'api' }],
    ['', {}],
    ['not json', { $unparsed_arguments: 'not json' }],
    ['[1,2]', { $unparsed_arguments: '[1,2]' }],
  ])('turns %j into %j (anything but an object is kept under a key no tool accepts)', (text, expected) => {
    expect(parseArguments(text)).toEqual(expected);
  });
});

describe('ScriptedModel', () => {
  const sut = new ScriptedModel();

  it('plays the script turn by turn, counted by assistant messages', async () => {
    const script = [{ toolCalls: [{ id: 'c1', name: 'list_services', args: {} }] }, { text: 'bye' }];
    expect(
      await sut.next({ systemPrompt: '', tools, script, messages: [{ role: 'user', content: 'hi' }] }),
    ).toEqual({
      kind: 'tool_calls',
      calls: [{ id: 'c1', name: 'list_services', args: {} }],
    });
    const later = await sut.next({
      systemPrompt: '',
      tools,
      script,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'list_services', args: {} }] },
        { role: 'tool', toolCallId: 'c1', name: 'list_services', content: '[]' },
      ],
    });
    expect(later).toEqual({ kind: 'text', text: 'bye' });
  });

  it('answers with the last results once the script is exhausted', async () => {
    const reply = await sut.next({
      systemPrompt: '',
      tools,
      script: [],
      messages: [
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'list_services', args: {} }] },
        { role: 'tool', toolCallId: 'c1', name: 'list_services', content: 'denied' },
      ],
    });
    expect(reply).toEqual({ kind: 'text', text: 'Done. Last results: denied' });
  });

  it('without a script, restarts the services the listing shows unhealthy', async () => {
    const reply = await sut.next({
      systemPrompt: '',
      tools,
      messages: [
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'list_services', args: {} }] },
        {
          role: 'tool',
          toolCallId: 'c1',
          name: 'list_services',
          content: '[{"name":"api","status":"healthy"},{"name":"db","status":"down"}]',
        },
      ],
    });
    expect(reply).toMatchObject({
      kind: 'tool_calls',
      calls: [{ name: 'restart_service', args: { service: 'db' } }],
    });
  });
});

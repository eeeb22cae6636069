// What the worker tells approvers about a call (callContext) and tells the model about people's actions (withNotes).
import type { ChatMessage } from '@countersign/contracts';
import { callContext } from './frontier';
import { editNote } from './frontier-settlement';
import { manualNoteMarker, withNotes } from './run-loop';

const conversation: ChatMessage[] = [
  { role: 'user', content: `  restart\n\npayments ${'please '.repeat(40)}` },
  { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'get_service_status', args: {} }] },
  { role: 'tool', toolCallId: 'c1', name: 'get_service_status', content: 'degraded' },
  {
    role: 'assistant',
    content: 'payments is degraded;   restarting it.',
    toolCalls: [{ id: 'c2', name: 'restart_service', args: { service: 'payments' } }],
  },
];

describe('callContext', () => {
  it('gives the run input and the text the model wrote before this call, each on one line and bounded', () => {
    const context = callContext(conversation, 'c2', 'payments (degraded, 2 replicas)');
    expect(context.input).toMatch(/^restart payments please please .*…$/);
    expect(context.input!.length).toBe(160);
    expect(context).toMatchObject({
      modelText: 'payments is degraded; restarting it.',
      preview: 'payments (degraded, 2 replicas)',
    });
  });

  it('leaves out what the model did not write, and a preview there is none of', () => {
    expect(callContext(conversation, 'c1')).toEqual({ input: expect.any(String) });
    expect(callContext([], 'c1')).toEqual({});
  });
});

describe('withNotes', () => {
  const note = { requestId: 'n1', callId: 'm1', text: 'A person did the manual step delete_volume.' };

  it('tells the model once about each manual step a person did', () => {
    const told = withNotes(conversation, [note]);
    expect(told.at(-1)).toEqual({ role: 'user', content: `${manualNoteMarker(note)} ${note.text}` });
    expect(withNotes(told, [note])).toBe(told);
    expect(withNotes(conversation, [])).toBe(conversation);
  });
});

describe('editNote', () => {
  it('says what ran instead of what the model asked for', () => {
    expect(editNote({ replicas: 9 }, { replicas: 4 })).toBe(
      'Note: an approver edited the arguments before approving. The call ran with {"replicas":4}, not the {"replicas":9} you asked for.',
    );
  });
});

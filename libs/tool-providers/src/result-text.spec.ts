import { capText, mcpResultText } from './result-text';

describe('mcpResultText', () => {
  it('joins text blocks and describes binary ones without inlining them', () => {
    expect(
      mcpResultText({
        content: [
          { type: 'text', text: 'line 1' },
          { type: 'image', mimeType: 'image/png', data: 'AAAA' },
          { type: 'resource', resource: { uri: 'file:///a', text: 'inline text' } },
          { type: 'resource_link', uri: 'file:///b', name: 'b' },
        ],
      }),
    ).toBe('line 1\n[image image/png, 3 bytes, not shown]\ninline text\n[resource link file:///b (b)]');
  });

  it('falls back to the structured content as JSON', () => {
    expect(mcpResultText({ content: [], structuredContent: { a: 1 } })).toBe('{"a":1}');
    expect(mcpResultText({})).toBe('');
  });
});

describe('capText', () => {
  it('leaves a text within the cap as it is', () => {
    expect(capText('abc', 3)).toBe('abc');
  });

  it('cuts a longer text and says how long it was', () => {
    expect(capText('abcdef', 4)).toBe(
      'abcd\n[truncated: the result was 6 bytes; only the first 4 are shown]',
    );
  });

  it('never cuts inside a character', () => {
    const cut = capText('ééé', 3); // 6 bytes: two bytes each
    expect(cut.startsWith('é\n')).toBe(true);
    expect(cut).not.toContain('\uFFFD');
  });

  it('says when only the start of the result was read', () => {
    expect(capText('abcd', 4, false)).toBe(
      'abcd\n[truncated: the result was longer than 4 bytes; only the first 4 are shown]',
    );
  });
});

import { slackSignature, verifySlackSignature } from './slack-signature';

const signingSecret = '8f742231b10e8888abcd99yyyzzz85a5';
const rawBody = 'payload=%7B%22type%22%3A%22block_actions%22%7D';
const now = 1_700_000_000;
const timestamp = String(now);
const signature = slackSignature(signingSecret, timestamp, rawBody);

describe('verifySlackSignature', () => {
  it('accepts a request signed with the signing secret', () => {
    expect(
      verifySlackSignature({ signingSecret, timestamp, signature, rawBody, nowSeconds: now + 299 }),
    ).toEqual({ ok: true });
  });

  it("matches the example in Slack's documentation", () => {
    // https://api.slack.com/authentication/verifying-requests-from-slack (the documented test vector)
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(slackSignature(signingSecret, '1531420618', body)).toBe(
      'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    );
  });

  it.each([
    ['a changed body', { rawBody: rawBody + 'x' }, 'bad_signature'],
    ['another secret', { signingSecret: 'another-secret' }, 'bad_signature'],
    ['a truncated signature', { signature: signature.slice(0, -2) }, 'bad_signature'],
    ['a timestamp older than five minutes', { nowSeconds: now + 301 }, 'stale_timestamp'],
    ['a timestamp from the future', { nowSeconds: now - 301 }, 'stale_timestamp'],
    ['a timestamp that is not a number', { timestamp: 'soon' }, 'stale_timestamp'],
    ['no signature', { signature: undefined }, 'missing_signature'],
  ])('refuses %s', (_what, change, reason) => {
    expect(
      verifySlackSignature({ signingSecret, timestamp, signature, rawBody, nowSeconds: now, ...change }),
    ).toEqual({ ok: false, reason });
  });
});

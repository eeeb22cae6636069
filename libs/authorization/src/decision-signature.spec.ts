import { createHmac } from 'node:crypto';
import { signPayload, verifyPayloadSignature, withSignature } from './decision-signature';
import { preconditionDigest } from './precondition';

const secret = 'test-secret';
const decision = {
  callId: 'call-1',
  runId: 'run-1',
  decision: 'approve',
  decidedBy: 'person',
  approvers: ['bob'],
  fingerprint: 'a'.repeat(64),
  shown: { toolName: 'restart_service', args: { service: 'api' } },
  attempt: 0,
  decidedAt: '2025-01-01T00:00:00.000Z',
};

describe('decision signature', () => {
  it('verifies a payload it signed', () => {
    expect(verifyPayloadSignature(withSignature(decision, secret), secret)).toBe(true);
  });

  it('is HMAC-SHA256 over the canonical JSON of every field but the signature', () => {
    const canonical =
      '{"approvers":["bob"],"attempt":0,"callId":"call-1","decidedAt":"2025-01-01T00:00:00.000Z","decidedBy":"person",' +
      `"decision":"approve","fingerprint":"${'a'.repeat(64)}","runId":"run-1",` +
      '"shown":{"args":{"service":"api"},"toolName":"restart_service"}}';
    const expected = createHmac('sha256', secret).update(canonical, 'utf8').digest('hex');
    expect(signPayload(decision, secret)).toBe(expected);
    expect(signPayload({ ...decision, signature: 'ignored' }, secret)).toBe(expected);
  });

  it('does not depend on field order', () => {
    const reordered = Object.fromEntries(Object.entries(decision).reverse());
    expect(signPayload(reordered, secret)).toBe(signPayload(decision, secret));
  });

  describe('rejects a tampered payload', () => {
    const signed = withSignature(decision, secret);
    it.each([
      ['decision flipped', { ...signed, decision: 'deny' }],
      ['call ID changed', { ...signed, callId: 'call-2' }],
      ['fingerprint changed', { ...signed, fingerprint: 'b'.repeat(64) }],
      ['shown args changed', { ...signed, shown: { toolName: 'restart_service', args: { service: 'db' } } }],
      ['field added', { ...signed, reason: 'sneaky' }],
      ['approver removed', { ...signed, approvers: [] }],
    ])('%s', (_case, tampered) => {
      expect(verifyPayloadSignature(tampered, secret)).toBe(false);
    });
  });

  describe("covers a respond's text", () => {
    const responded = withSignature(
      { ...decision, decision: 'respond', response: 'Restart only the canary first.' },
      secret,
    );
    it('verifies the text as signed', () => {
      expect(verifyPayloadSignature(responded, secret)).toBe(true);
    });
    it.each([
      ['text changed', { ...responded, response: 'Restart everything now.' }],
      ['text emptied', { ...responded, response: '' }],
      ['text removed', Object.fromEntries(Object.entries(responded).filter(([k]) => k !== 'response'))],
      ['turned into an approve', { ...responded, decision: 'approve' }],
    ])('%s', (_case, tampered) => {
      expect(verifyPayloadSignature(tampered, secret)).toBe(false);
    });
  });

  describe('rejects a forged or missing signature', () => {
    it.each([
      ['no signature', { ...decision }],
      ['signed with another secret', withSignature(decision, 'other-secret')],
      ['signature not hex', { ...decision, signature: 'z'.repeat(64) }],
      ['signature too short', { ...decision, signature: 'ab' }],
      ['signature uppercase', { ...decision, signature: signPayload(decision, secret).toUpperCase() }],
      ['signature not a string', { ...decision, signature: 42 }],
    ])('%s', (_case, payload) => {
      expect(verifyPayloadSignature(payload, secret)).toBe(false);
    });
  });

  describe('covers the precondition value the approvers were shown', () => {
    const signed = withSignature({ ...decision, precondition: preconditionDigest({ replicas: 6 }) }, secret);

    it('verifies the decision as signed', () => {
      expect(verifyPayloadSignature(signed, secret)).toBe(true);
    });

    it.each([
      ['the value changed', { ...signed, precondition: preconditionDigest({ replicas: 9 }) }],
      ['the value left out', (({ precondition: _p, ...rest }) => rest)(signed)],
      [
        'a value added to a decision signed without one',
        { ...withSignature(decision, secret), precondition: signed.precondition },
      ],
    ])('refuses it with %s', (_case, tampered) => {
      expect(verifyPayloadSignature(tampered, secret)).toBe(false);
    });
  });
});

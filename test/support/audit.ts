// The audit signing secret of the tests' services, and a keyring with it for tests that read or write the log directly.
import { AuditKeyring } from '@countersign/audit';

export const TEST_AUDIT_SECRET = 'e2e-audit-signing-secret-0123456789abcdef';

export function testAuditKeyring(previous: readonly string[] = []): AuditKeyring {
  return new AuditKeyring(TEST_AUDIT_SECRET, previous);
}
